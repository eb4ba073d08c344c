// What both payment webhooks need: the fraud model, the stores, and our merchant profile.
import { z } from "zod";
import { ServiceError } from "../../errors/service-error";
import { durableHistories } from "../../storage/card-history";
import { d1Decisions } from "../../storage/decisions";
import type { DecisionStore, HistoryStore } from "../../tasks/fraud/decide";
import type { FraudScorer } from "../../tasks/fraud/fraud-scoring";
import type { MerchantProfile } from "../../tasks/fraud/sources/stripe";
import type { Services } from "../../tasks";
import { requireReady } from "../services";

const MerchantProfileSchema = z.object({
  id: z.string().min(1),
  mcc: z.string().regex(/^\d{4}$/),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().regex(/^\d{1,10}$/).optional(),
});

export interface FraudContext {
  scorer: FraudScorer;
  decisions: DecisionStore;
  histories: HistoryStore;
  merchant: MerchantProfile;
}

/** Resolves the configured fraud model (503 until it is ready) and the stores. */
export async function fraudContext(env: Env, services: Services): Promise<FraudContext> {
  const model = services.get(env.FRAUD_MODEL);
  if (model === undefined || model.task.task !== "fraud-scoring") {
    throw new ServiceError(503, "model_not_ready", `FRAUD_MODEL "${env.FRAUD_MODEL}" is not a served fraud-scoring model`);
  }
  await requireReady(model);
  return { scorer: model.task.service, decisions: d1Decisions(env.DB), histories: durableHistories(env.CARD_HISTORY), merchant: merchantProfile(env.MERCHANT_PROFILE) };
}

/** MERCHANT_PROFILE parsed once per isolate (configuration, not request data). */
const profiles = new Map<string, MerchantProfile>();

function merchantProfile(config: string): MerchantProfile {
  let profile = profiles.get(config);
  if (profile === undefined) {
    const parsed = MerchantProfileSchema.safeParse(parseJson(config));
    if (!parsed.success) throw new ServiceError(500, "internal_error", "MERCHANT_PROFILE is not a valid merchant profile");
    profile = parsed.data;
    profiles.set(config, profile);
  }
  return profile;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
