// One Durable Object per card: its recent transactions, its decisions and the event ids that
// reached them, in SQLite, copied to D1 through an outbox. src/cards.ts adds the decision itself
// (the model and the rules) to make the Worker's CardHistory class.
import { DurableObject } from "cloudflare:workers";
import type { Transaction } from "../transaction";
import { createCardSchema } from "./card-schema";
import { copyToD1, type Decision, type DecisionEvent, type OutboxEntry } from "./decisions";
import type {
  CardLedger,
  CardView,
  Committed,
  Decided,
  Delivery,
  PaymentEvent,
  Prepared,
} from "./ledger";

/** Transactions kept per card; far more than the model's window, for late (out-of-order) events. */
const KEEP = 64;
/** How soon after a commit the outbox is copied into D1 (commits meanwhile share the batch). */
const COPY_DELAY_MS = 1000;
/**
 * Up to this much more, drawn once per object: cards whose payments began together (a burst, a
 * benchmark's cell) copy at different moments instead of all at once, one D1 batch each.
 */
const COPY_SPREAD_MS = 1000;
/** Commits between two prunings of the history (it holds at most KEEP + PRUNE_EVERY entries). */
const PRUNE_EVERY = 16;
/** Outbox entries copied into D1 per batch. */
const COPY_BATCH = 100;
/** How soon the outbox is replayed into D1 again after a failed copy. */
const RETRY_MS = 10_000;

/** Where a test's fault hook aborts a commit (never set in production: see `faultAfter`). */
export type FaultPoint = "event" | "history" | "decision";

/**
 * The idempotency key, the history append and the decision are one transaction (transactionSync):
 * after any crash there is both or neither, and of concurrent deliveries of one payment exactly one
 * is first.
 */
export abstract class CardLedgerObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Test-only fault hook: tests set it through runInDurableObject; nothing else can reach it. */
  faultAfter: FaultPoint | undefined;
  /** When the alarm that copies the outbox will run, if this object set one since it started. */
  private copyAt: number | undefined;
  /** Commits since this object last pruned its history. */
  private unpruned = PRUNE_EVERY;
  /**
   * Outbox entries up to this seq are in D1, and those up to `deletedThrough` are gone from the
   * outbox: copied entries are deleted by the next commit's transaction, not by a write of their
   * own (after a restart both are 0, and the outbox is copied again: D1's inserts are idempotent).
   */
  private copiedThrough = 0;
  private deletedThrough = 0;
  /**
   * History entries this object has added since it started: a prepared payment is stale when
   * another commit came between (only commit() writes history, one object at a time).
   */
  private appended = 0;
  /** This object's copy delay: COPY_DELAY_MS plus its share of COPY_SPREAD_MS. */
  private readonly copyDelay = COPY_DELAY_MS + Math.floor(Math.random() * COPY_SPREAD_MS);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    createCardSchema(this.sql);
  }

  /**
   * The payment's decision if it has one (recording this delivery), else the history to score it
   * against.
   */
  protected async prepare(delivery: Delivery, at: number, size: number): Promise<Prepared> {
    // Reads need no transaction: nothing else runs in this object until the next await.
    const decided = this.decision(delivery.transactionKey);
    if (decided !== undefined) {
      this.ctx.storage.transactionSync(() => this.recordEvent(delivery));
      await this.scheduleCopy(this.copyDelay);
      return { decided };
    }
    return { history: this.history(delivery.transactionKey, at, size), version: this.appended };
  }

  /**
   * Stores the event id, the history entry and the decision in one transaction, unless the
   * payment was decided meanwhile (that decision is returned, `duplicate: true`) or the history
   * changed since `version` (`stale`: score again). `version: null` commits regardless.
   */
  protected async commit(
    delivery: Delivery,
    transaction: Transaction,
    decision: Decision,
    version: number | null,
  ): Promise<Committed> {
    const dropping = this.copiedThrough;
    const committed = this.ctx.storage.transactionSync((): Committed => {
      // Nothing was committed since prepare() found no decision: there is none now either.
      const unchanged = version !== null && version === this.appended;
      const existing = unchanged ? undefined : this.decision(delivery.transactionKey);
      if (existing !== undefined) {
        this.recordEvent(delivery);
        return { decision: existing, duplicate: true };
      }
      if (version !== null && !unchanged) return { stale: true };
      const event = this.recordEvent(delivery, false);
      this.fault("event");
      this.sql.exec(
        "INSERT INTO history (transaction_key, at, body) VALUES (?, ?, ?)",
        delivery.transactionKey,
        transaction.timestamp,
        JSON.stringify(transaction),
      );
      this.fault("history");
      const body = JSON.stringify(decision);
      this.sql.exec(
        "INSERT INTO decisions (transaction_key, at, body) VALUES (?, ?, ?)",
        delivery.transactionKey,
        transaction.timestamp,
        body,
      );
      this.fault("decision");
      // One outbox entry carries the decision and its first delivery into D1 (an OutboxEntry,
      // written around the decision's JSON instead of serializing it a second time).
      this.sql.exec(
        "INSERT INTO outbox (body) VALUES (?)",
        `{"kind":"decision","decision":${body}${event === undefined ? "" : `,"event":${event}`}}`,
      );
      if (dropping > this.deletedThrough)
        this.sql.exec("DELETE FROM outbox WHERE seq <= ?", dropping);
      if (++this.unpruned >= PRUNE_EVERY) {
        this.unpruned = 0;
        this.sql.exec(
          "DELETE FROM history WHERE transaction_key NOT IN (SELECT transaction_key " +
            "FROM history ORDER BY at DESC, transaction_key DESC LIMIT ?)",
          KEEP,
        );
      }
      return { decision, duplicate: false };
    });
    // No await between the transaction and setAlarm: both reach disk together (write
    // coalescing), so an outbox entry always has an alarm that will copy it into D1. The copy
    // itself runs in the alarm, off the provider's request path.
    if ("stale" in committed) return committed;
    if (!committed.duplicate) {
      this.appended++;
      this.deletedThrough = Math.max(this.deletedThrough, dropping);
    }
    await this.scheduleCopy(this.copyDelay);
    return committed;
  }

  /** Decides a payment of this card (src/cards.ts: the model and the rules). */
  abstract decide(event: PaymentEvent): Promise<Decided>;

  /** This object's own ledger, as the decision uses it (direct calls, no RPC). */
  protected ledger(): CardLedger {
    return {
      prepare: (_card, delivery, at, size) => this.prepare(delivery, at, size),
      commit: (_card, delivery, transaction, decision, version) =>
        this.commit(delivery, transaction, decision, version),
    };
  }

  /** History, decisions and deliveries of this card, oldest first (operators and tests). */
  async view(): Promise<CardView> {
    await this.flush();
    const bodies = (query: string) =>
      this.sql
        .exec<{ body: string }>(query)
        .toArray()
        .map((row) => row.body);
    return {
      history: bodies("SELECT body FROM history ORDER BY at, transaction_key").map(
        (body) => JSON.parse(body) as Transaction,
      ),
      decisions: bodies("SELECT body FROM decisions ORDER BY at, transaction_key").map(
        (body) => JSON.parse(body) as Decision,
      ),
      events: bodies("SELECT body FROM events ORDER BY rowid").map(
        (body) => JSON.parse(body) as DecisionEvent,
      ),
    };
  }

  /** Replays the outbox into D1; an alarm retries while D1 cannot take it. */
  override async alarm(): Promise<void> {
    this.copyAt = undefined;
    await this.flush();
  }

  /** Sets the alarm `ms` from now unless one is already due sooner. */
  private scheduleCopy(ms: number): Promise<void> {
    const at = Date.now() + ms;
    if (this.copyAt !== undefined && this.copyAt <= at) return Promise.resolve();
    this.copyAt = at;
    return this.ctx.storage.setAlarm(at);
  }

  private async flush(): Promise<void> {
    const rows = this.sql
      .exec<{ seq: number; body: string }>(
        "SELECT seq, body FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
        this.copiedThrough,
        COPY_BATCH,
      )
      .toArray();
    const last = rows.at(-1);
    if (last === undefined) {
      // Nothing new: a card gone quiet deletes what it copied with a write of its own.
      if (this.copiedThrough > this.deletedThrough) {
        this.sql.exec("DELETE FROM outbox WHERE seq <= ?", this.copiedThrough);
        this.deletedThrough = this.copiedThrough;
      }
      return;
    }
    // Every entry was committed with an alarm set (and an alarm whose handler dies is run again),
    // so a copy that fails here, or a process that dies during it, is replayed.
    try {
      await copyToD1(
        this.env.DB,
        rows.map((row) => JSON.parse(row.body) as OutboxEntry),
      );
    } catch (error) {
      console.warn(
        `D1 copy of ${rows.length} outbox entries failed; retrying in ${RETRY_MS} ms`,
        error,
      );
      await this.scheduleCopy(RETRY_MS);
      return;
    }
    this.copiedThrough = Math.max(this.copiedThrough, last.seq);
    // The alarm stays set: a commit during the copy may rely on it (a spare run finds nothing).
    if (rows.length === COPY_BATCH) await this.flush();
  }

  private decision(transactionKey: string): Decision | undefined {
    const row = this.sql
      .exec<{ body: string }>(
        "SELECT body FROM decisions WHERE transaction_key = ?",
        transactionKey,
      )
      .toArray()[0];
    return row === undefined ? undefined : (JSON.parse(row.body) as Decision);
  }

  /** Up to `size` transactions before `at` (oldest first), never the payment itself. */
  private history(transactionKey: string, at: number, size: number): Transaction[] {
    const rows = this.sql
      .exec<{ body: string }>(
        "SELECT body FROM history WHERE transaction_key != ? AND " +
          `(at < ? OR (at = ? AND transaction_key < ?))
         ORDER BY at DESC, transaction_key DESC LIMIT ?`,
        transactionKey,
        at,
        at,
        transactionKey,
        size,
      )
      .toArray();
    return rows.reverse().map((row) => JSON.parse(row.body) as Transaction);
  }

  /**
   * Records a delivery once (its event id); `copy`: with its own outbox entry. Returns the event's
   * JSON when it was new.
   */
  private recordEvent(delivery: Delivery, copy = true): string | undefined {
    const event: DecisionEvent = {
      eventId: delivery.eventId,
      transactionKey: delivery.transactionKey,
      provider: delivery.provider,
      eventType: delivery.eventType,
      receivedAt: new Date().toISOString(),
    };
    const body = JSON.stringify(event);
    const inserted = this.sql.exec(
      "INSERT INTO events (event_id, transaction_key, body) " +
        "VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING",
      event.eventId,
      event.transactionKey,
      body,
    ).rowsWritten;
    if (inserted === 0) return undefined;
    if (copy) this.enqueue({ kind: "event", event });
    return body;
  }

  private enqueue(entry: OutboxEntry): void {
    this.sql.exec("INSERT INTO outbox (body) VALUES (?)", JSON.stringify(entry));
  }

  private fault(point: FaultPoint): void {
    if (this.faultAfter === point) throw new Error(`fault injected after the ${point} write`);
  }
}
