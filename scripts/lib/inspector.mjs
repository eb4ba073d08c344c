// A devtools-protocol session over an inspector's WebSocket (`wrangler dev --inspector-port`):
// commands answered by id, events handed to one listener per method.
import WebSocket from "ws";

export async function inspector(url) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let nextId = 0;
  const pending = new Map();
  const listeners = new Map();
  socket.on("message", (raw) => {
    const message = JSON.parse(raw.toString());
    if (message.id === undefined) {
      listeners.get(message.method)?.(message.params);
      return;
    }
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, (message) =>
        message.error ? reject(new Error(message.error.message)) : resolve(message.result),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    send,
    onEvent: (method, listener) => listeners.set(method, listener),
    close: () => socket.close(),
  };
}
