// The Chat tab: a streamed chat completion (OpenAI's SSE chunks) whose text grows as tokens
// arrive, with time to first token, tokens/s and usage; Stop aborts the fetch, which the edge
// turns into an abort of the origin's work. Tool calls and JSON answers are shown as such.
import { call } from "./api";
import { byId, element, optionalNumber, showError } from "./dom";
import { fillModelSelect } from "./models";
import { readEvents } from "./sse";

interface ToolCallDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface ChatChunk {
  choices: Array<{
    delta: { content?: string | null; tool_calls?: ToolCallDelta[] };
    finish_reason: string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  error?: { message: string };
}

const input = (id: string) => byId(id, HTMLInputElement);
const area = (id: string) => byId(id, HTMLTextAreaElement);

/** The request body the form describes (JSON fields parsed; a parse error names the field). */
function chatRequest(): Record<string, unknown> {
  const messages = [];
  const system = area("chat-system").value.trim();
  if (system !== "") messages.push({ role: "system", content: system });
  messages.push({ role: "user", content: area("chat-prompt").value });
  const stop = area("chat-stop")
    .value.split("\n")
    .filter((line) => line !== "");
  const body: Record<string, unknown> = {
    model: byId("chat-model", HTMLSelectElement).value,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: optionalNumber(input("chat-max-tokens")),
    temperature: optionalNumber(input("chat-temperature")),
    top_p: optionalNumber(input("chat-top-p")),
    seed: optionalNumber(input("chat-seed")),
    ...(stop.length > 0 ? { stop } : {}),
  };
  const format = byId("chat-format", HTMLSelectElement).value;
  if (format === "json_object") body.response_format = { type: "json_object" };
  if (format === "json_schema") {
    const schema = parseJson(area("chat-schema").value, "response_format.json_schema.schema");
    body.response_format = { type: "json_schema", json_schema: { name: "answer", schema } };
  }
  const tools = area("chat-tools").value.trim();
  if (tools !== "") {
    body.tools = parseJson(tools, "tools");
    const choice = byId("chat-tool-choice", HTMLSelectElement).value;
    if (choice !== "auto") body.tool_choice = choice;
    if (!input("chat-parallel").checked) body.parallel_tool_calls = false;
  }
  return body;
}

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${field} is not valid JSON: ${String(error)}`);
  }
}

export function setUpChat(): void {
  const form = byId("chat-form", HTMLFormElement);
  const send = byId("chat-send", HTMLButtonElement);
  const stop = byId("chat-stop-button", HTMLButtonElement);
  const output = byId("chat-output", HTMLElement);
  const tools = byId("chat-tool-calls", HTMLElement);
  const stats = byId("chat-stats", HTMLElement);
  const errors = byId("chat-error", HTMLElement);
  const state = byId("chat-state", HTMLElement);
  let controller: AbortController | undefined;

  void fillModelSelect(byId("chat-model", HTMLSelectElement), "text-generation").catch(
    (error: unknown) => showError(errors, error),
  );
  stop.addEventListener("click", () => controller?.abort());
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    controller = new AbortController();
    void run(controller.signal);
  });

  async function run(signal: AbortSignal) {
    showError(errors, undefined);
    output.textContent = "";
    output.classList.remove("json");
    tools.replaceChildren();
    stats.textContent = "";
    send.disabled = true;
    stop.disabled = false;
    state.textContent = "streaming";
    const calls: Array<{ name: string; arguments: string }> = [];
    const started = performance.now();
    let firstToken: number | undefined;
    let pieces = 0;
    let usage: ChatChunk["usage"];
    let finish = "";
    try {
      const response = await call("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(chatRequest()),
        signal,
      });
      await readEvents(response, ({ data }) => {
        if (data === "[DONE]") return;
        const chunk = JSON.parse(data) as ChatChunk;
        if (chunk.error !== undefined) throw new Error(chunk.error.message);
        if (chunk.usage) usage = chunk.usage;
        for (const choice of chunk.choices) {
          const text = choice.delta.content ?? "";
          if (text !== "" || choice.delta.tool_calls !== undefined) {
            firstToken ??= performance.now();
            pieces++;
          }
          output.textContent += text;
          for (const delta of choice.delta.tool_calls ?? []) {
            const call = (calls[delta.index] ??= { name: "", arguments: "" });
            call.name += delta.function?.name ?? "";
            call.arguments += delta.function?.arguments ?? "";
          }
          if (choice.finish_reason !== null) finish = choice.finish_reason;
        }
        renderCalls(tools, calls);
        stats.textContent = figures(started, firstToken, pieces, usage, finish);
      });
      prettyPrintJson(output);
      const rate = tokensPerSecond(firstToken, usage?.completion_tokens ?? pieces);
      if (rate !== undefined) document.dispatchEvent(new CustomEvent(TOKEN_RATE, { detail: rate }));
      state.textContent = `done (${finish || "ended"})`;
    } catch (error) {
      state.textContent = signal.aborted ? "stopped" : "failed";
      showError(errors, error);
    } finally {
      send.disabled = false;
      stop.disabled = true;
      stats.textContent = figures(started, firstToken, pieces, usage, finish);
    }
  }
}

/** Fired when a chat's stream ends: `detail` is its tokens/s after the first token. */
export const TOKEN_RATE = "playground:token-rate";

function tokensPerSecond(firstToken: number | undefined, tokens: number): number | undefined {
  if (firstToken === undefined || tokens < 2) return undefined;
  const seconds = (performance.now() - firstToken) / 1000;
  return seconds > 0 ? (tokens - 1) / seconds : undefined;
}

function figures(
  started: number,
  firstToken: number | undefined,
  pieces: number,
  usage: ChatChunk["usage"],
  finish: string,
): string {
  const parts = [];
  if (firstToken !== undefined) {
    parts.push(`first token ${Math.round(firstToken - started)} ms`);
    const rate = tokensPerSecond(firstToken, usage?.completion_tokens ?? pieces);
    if (rate !== undefined) parts.push(`${rate.toFixed(1)} tokens/s`);
  }
  if (usage)
    parts.push(
      `usage: ${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion` +
        ` = ${usage.total_tokens} tokens`,
    );
  if (finish !== "") parts.push(`finish: ${finish}`);
  return parts.join(" · ");
}

function renderCalls(box: HTMLElement, calls: ReadonlyArray<{ name: string; arguments: string }>) {
  box.replaceChildren(
    ...calls.map((call) => {
      const item = element("div", "", { class: "tool-call" });
      item.append(element("strong", `tool call: ${call.name}`), element("pre", call.arguments));
      return item;
    }),
  );
}

/** A structured (JSON) answer is re-indented once complete. */
function prettyPrintJson(output: HTMLElement): void {
  const text = output.textContent ?? "";
  if (!/^\s*[[{]/.test(text)) return;
  try {
    output.textContent = JSON.stringify(JSON.parse(text), null, 2);
    output.classList.add("json");
  } catch {
    // Not JSON after all (or cut by max_tokens): shown as it came.
  }
}
