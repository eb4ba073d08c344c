// Automatic prefix caching: prompts' and their outputs' keys/values kept in hashed blocks so a
// later prompt with the same start skips their prefill.
import { createHash } from "node:crypto";
import { type KvShape, readColumns, type Segment } from "./kv-segments";

/** Tokens per block (vLLM's default block size). */
export const BLOCK = 16;
/** Blocks per slab of storage. */
const SLAB = 64;
/** First-block hashes the doorkeeper remembers. */
const SEEN = 16_384;

interface Block {
  readonly hash: string;
  readonly parentHash: string;
  readonly ids: Int32Array;
  /** Per tensor (layer × key/value) and head: BLOCK columns of headDim floats. */
  readonly data: Float32Array;
}

const ROOT = "";

function blockHash(parentHash: string, ids: Int32Array): string {
  return createHash("sha256")
    .update(parentHash)
    .update(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength))
    .digest("hex");
}

/**
 * A prompt's whole blocks and their chained hashes, computed as far as they are read and then
 * kept: a request waiting for a row is looked up again at every turn of the engine's loop. A
 * finished request's prompt and output start with its prompt's blocks, hashed once.
 */
export class PromptBlocks {
  private readonly hashed: { hash: string; ids: Int32Array }[] = [];

  /** `ids` and the blocks of `start`, whose ids must begin `ids`. */
  constructor(
    readonly ids: readonly number[],
    start?: PromptBlocks,
  ) {
    if (start !== undefined)
      this.hashed.push(...start.hashed.slice(0, Math.min(this.count, start.count)));
  }

  /** Whole blocks in the prompt. */
  get count(): number {
    return Math.floor(this.ids.length / BLOCK);
  }

  block(b: number): { hash: string; ids: Int32Array } {
    for (let next = this.hashed.length; next <= b; next++) {
      const own = Int32Array.from(this.ids.slice(next * BLOCK, (next + 1) * BLOCK));
      this.hashed.push({
        hash: blockHash(next === 0 ? ROOT : this.hashed[next - 1]!.hash, own),
        ids: own,
      });
    }
    return this.hashed[b]!;
  }
}

/**
 * Automatic prefix caching, as vLLM's (vllm/v1/core/kv_cache_utils.py, block hashes;
 * vllm/v1/core/kv_cache_manager.py get_computed_blocks): the keys/values of prompts are kept
 * in whole blocks of BLOCK tokens, each named by a hash of its parent block's hash and its own
 * token ids, so a later prompt that starts with the same blocks (a shared system prompt, a
 * chat's earlier turns) skips their prefill. The hash is SHA-256 and every block also holds
 * its ids and its parent's hash, checked on each hit: one request's keys/values never serve
 * another prompt (vLLM moved to SHA-256 for that reason: GHSA-rm76-4mrf-v9r8).
 * Least recently used blocks go first once the cache holds more than its budget; a hit
 * touches its chain from the last block to the first, so a prefix outlives its extensions.
 * Unlike vLLM's paged cache, where a computed block is already in place, keeping a block here
 * is a copy of its keys/values (96 KB for the tiny LLM), so blocks are admitted as TinyLFU's
 * doorkeeper admits entries: a prompt's blocks are kept once its first block has been seen
 * before (a system prompt, a few-shot preamble, a chat's later turns), and a prompt that
 * shares nothing with earlier ones costs one hash, not a copy of all its keys/values
 * (`admitAll`, ORIGIN_PREFIX_CACHE_ADMIT=always: every prompt's blocks are kept, as vLLM's are).
 * A finished request's output is kept too, in the blocks it fills after its prompt's (vLLM
 * hashes a sequence's blocks alike, prompt and output), so a chat's next turn, which resends
 * the answer, reads it from the cache; only a request whose prompt's blocks were kept adds them.
 */
export class PrefixCache {
  /** Insertion order is recency: the first block is the least recently used. */
  private readonly blocks = new Map<string, Block>();
  private readonly blockFloats: number;
  /** Most blocks held. */
  private readonly slots: number;
  /**
   * Blocks' storage: slabs of SLAB blocks, allocated as the cache grows and then reused (an
   * evicted block's place takes the next one), so that keeping blocks allocates nothing per
   * prompt and leaves the garbage collector no buffers to reclaim.
   */
  private readonly slabs: Float32Array[] = [];
  private readonly free: Float32Array[] = [];
  /**
   * First blocks seen once, by hash (the doorkeeper; least recently seen out first beyond SEEN).
   */
  private readonly seen = new Set<string>();

  constructor(
    private readonly shape: KvShape,
    /** Most bytes of keys/values held; 0 keeps nothing. */
    readonly budgetBytes: number,
    /** Keep every prompt's blocks, as vLLM does (no doorkeeper): ORIGIN_PREFIX_CACHE_ADMIT. */
    private readonly admitAll = false,
  ) {
    this.blockFloats = shape.layers * 2 * shape.kvHeads * BLOCK * shape.headDim;
    this.slots = Math.floor(budgetBytes / (this.blockFloats * 4));
  }

  /** Bytes of the blocks held. */
  get bytes(): number {
    return this.blocks.size * this.blockFloats * 4;
  }

  /** Storage for one more block: a free place, a new slab's, or the least recently used block's. */
  private place(): Float32Array {
    const free = this.free.pop();
    if (free !== undefined) return free;
    const allocated = this.slabs.length * SLAB;
    if (allocated < this.slots) {
      const count = Math.min(SLAB, this.slots - allocated);
      const slab = new Float32Array(count * this.blockFloats);
      this.slabs.push(slab);
      for (let i = count - 1; i > 0; i--)
        this.free.push(slab.subarray(i * this.blockFloats, (i + 1) * this.blockFloats));
      return slab.subarray(0, this.blockFloats);
    }
    const [hash, oldest] = this.blocks.entries().next().value!;
    this.blocks.delete(hash);
    return oldest.data;
  }

  private find(hash: string, parentHash: string, ids: Int32Array): Block | undefined {
    const block = this.blocks.get(hash);
    if (
      block === undefined ||
      block.parentHash !== parentHash ||
      block.ids.length !== ids.length ||
      !block.ids.every((id, i) => id === ids[i])
    )
      return undefined;
    return block;
  }

  private touch(blocks: readonly Block[]): void {
    for (let i = blocks.length - 1; i >= 0; i--) {
      this.blocks.delete(blocks[i]!.hash);
      this.blocks.set(blocks[i]!.hash, blocks[i]!);
    }
  }

  /**
   * The longest run of cached whole blocks the prompt starts with, leaving at least one of
   * its tokens to compute (the last token's logits give the first new token), as vLLM does.
   * The blocks hold their keys/values until the next insert, which may reuse their storage.
   */
  match(prompt: PromptBlocks): Block[] {
    if (this.blocks.size === 0) return [];
    const found: Block[] = [];
    let parent = ROOT;
    for (let b = 0; b < Math.floor((prompt.ids.length - 1) / BLOCK); b++) {
      const { hash, ids: own } = prompt.block(b);
      const block = this.find(hash, parent, own);
      if (block === undefined) break;
      found.push(block);
      parent = hash;
    }
    this.touch(found);
    return found;
  }

  /**
   * Copies matched blocks into row `row` of per-tensor arrays [rows, kvHeads, length, headDim],
   * from column 0.
   */
  gather(
    blocks: readonly Block[],
    out: readonly Float32Array[],
    row: number,
    length: number,
  ): void {
    const { kvHeads, headDim } = this.shape;
    blocks.forEach((block, b) => {
      for (let tensor = 0; tensor < out.length; tensor++) {
        for (let head = 0; head < kvHeads; head++) {
          const from = (tensor * kvHeads + head) * BLOCK * headDim;
          out[tensor]!.set(
            block.data.subarray(from, from + BLOCK * headDim),
            ((row * kvHeads + head) * length + b * BLOCK) * headDim,
          );
        }
      }
    });
  }

  /**
   * Keeps the prompt's whole blocks that are not cached yet, read from its row's keys/values,
   * once its first block has been seen before (cached, or remembered by the doorkeeper).
   */
  insert(prompt: PromptBlocks, segments: readonly Segment[]): void {
    if (prompt.count === 0 || this.slots === 0) return;
    const { hash } = prompt.block(0);
    if (!this.admitAll && !this.blocks.has(hash) && !this.seen.delete(hash)) {
      // A first block never seen before: remembered, nothing kept (yet).
      this.seen.add(hash);
      if (this.seen.size > SEEN) this.seen.delete(this.seen.values().next().value!);
      return;
    }
    this.keep(prompt, segments);
  }

  /**
   * A finished request's prompt (`prompt`) and `output`, as far as its row holds them (`filled`
   * tokens in `segment`: never the last token, which is not fed back).
   */
  keepAnswer(prompt: PromptBlocks, output: readonly number[], filled: number, segment: Segment) {
    const held = [...prompt.ids, ...output].slice(0, filled);
    this.extend(new PromptBlocks(held, prompt), [segment]);
  }

  /**
   * Keeps the whole blocks of a finished request's prompt and output (`sequence`: the tokens whose
   * keys/values its row holds, in `segments`) when its first block is cached: the blocks its
   * prompt's prefill kept are found, those its decode steps filled are added.
   */
  extend(sequence: PromptBlocks, segments: readonly Segment[]): void {
    if (sequence.count > 0 && this.blocks.has(sequence.block(0).hash))
      this.keep(sequence, segments);
  }

  /** Keeps the blocks from the first on, reading those not cached yet from `segments`. */
  private keep(prompt: PromptBlocks, segments: readonly Segment[]): void {
    // A prompt longer than the whole cache keeps its first blocks only: its later ones would evict
    // them.
    const whole = Math.min(prompt.count, this.slots);
    const { kvHeads, headDim } = this.shape;
    const kept: Block[] = [];
    let parent = ROOT;
    for (let b = 0; b < whole; b++) {
      const { hash, ids: own } = prompt.block(b);
      let block = this.find(hash, parent, own);
      if (block === undefined) {
        const data = this.place();
        for (let tensor = 0; tensor < this.shape.layers * 2; tensor++) {
          for (let head = 0; head < kvHeads; head++)
            readColumns(
              segments,
              this.shape,
              tensor,
              head,
              b * BLOCK,
              BLOCK,
              data,
              (tensor * kvHeads + head) * BLOCK * headDim,
            );
        }
        block = { hash, parentHash: parent, ids: own, data };
      }
      // Most recent at once, so that making room for the prompt's next block never takes one of its
      // own.
      this.touch([block]);
      kept.push(block);
      parent = hash;
    }
    this.touch(kept);
  }
}
