// What both payment webhooks need: the fraud model, the card ledger, our merchant profile,
// and a D1 schema with every migration applied.
import { memoMap } from "../../memos";
import { z } from "zod";
import { ServiceError } from "../../errors/service-error";
import type { Cards } from "./ledger/ledger";
import type { FraudScorer } from "./scoring";
import type { MerchantProfile } from "./sources/stripe";
import type { Services } from "..";
import type { FraudStores } from "./ledger/ledger";
import { requireReady } from "../model-lookup";

const MerchantProfileSchema = z.object({
  id: z.string().min(1),
  mcc: z.string().regex(/^\d{4}$/),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z
    .string()
    .regex(/^\d{1,10}$/)
    .optional(),
});

export interface FraudContext {
  scorer: FraudScorer;
  ledger: Cards;
  merchant: MerchantProfile;
}

/**
 * Resolves the configured fraud model (503 until it is ready) beside the store composed at the top
 * (src/compose.ts).
 */
export async function fraudContext(
  env: Env,
  services: Services,
  stores: FraudStores,
): Promise<FraudContext> {
  const scorer = await fraudScorer(env, services);
  return { scorer, ledger: stores.ledger, merchant: merchantProfile(env.MERCHANT_PROFILE) };
}

/** The configured fraud model's scorer, once it is ready (503 model_not_ready until then). */
export async function fraudScorer(env: Env, services: Services): Promise<FraudScorer> {
  const model = services.get(env.FRAUD_MODEL);
  const scorer = model?.capabilities.fraudScoring;
  if (model === undefined || scorer === undefined) {
    throw new ServiceError(
      503,
      "model_not_ready",
      `FRAUD_MODEL "${env.FRAUD_MODEL}" is not a served fraud-scoring model`,
    );
  }
  await requireReady(model);
  return scorer;
}

/** 503 not_configured naming the migrations D1 lacks: the provider retries, nothing is lost. */
export async function requireSchema(stores: FraudStores): Promise<void> {
  const missing = await stores.missingMigrations();
  if (missing.length === 0) return;
  throw new ServiceError(
    503,
    "not_configured",
    `The D1 database lacks migration ${missing.join(", ")}: ` +
      "run `wrangler d1 migrations apply DB`",
    {
      headers: { "retry-after": "60" },
    },
  );
}

/** The merchant profile alone (for mapping events before the model is needed). */
export function merchantOf(env: Env): MerchantProfile {
  return merchantProfile(env.MERCHANT_PROFILE);
}

/** MERCHANT_PROFILE parsed once per isolate (configuration, not request data). */
const profiles = memoMap<string, MerchantProfile>("fraud.merchant-profiles");

function merchantProfile(config: string): MerchantProfile {
  let profile = profiles.get(config);
  if (profile === undefined) {
    const parsed = MerchantProfileSchema.safeParse(parseJson(config));
    if (!parsed.success)
      throw new ServiceError(
        500,
        "internal_error",
        "MERCHANT_PROFILE is not a valid merchant profile",
      );
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
