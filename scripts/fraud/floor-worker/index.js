// A decision's shape with none of its work: the body read as the webhook reads it, parsed, one
// call to the card's Durable Object by name, one row inserted there, a JSON answer. What workerd
// itself costs a decision, for scripts/fraud/gc-floor.mjs to compare the service with.
import { DurableObject } from "cloudflare:workers";

export class Card extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, body TEXT)");
  }

  decide(eventId, body) {
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO events VALUES (?, ?)", eventId, body);
    return { approved: true, score: 0 };
  }
}

export default {
  async fetch(request, env) {
    const body = await new Response(request.body).text();
    const event = JSON.parse(body);
    const card = env.CARDS.getByName(event.data.object.card.id);
    const decision = await card.decide(event.id, body);
    return Response.json({
      approved: decision.approved,
      metadata: { fraud_score: decision.score.toFixed(4) },
    });
  },
};
