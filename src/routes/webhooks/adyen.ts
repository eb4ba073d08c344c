// POST /v1/webhooks/adyen: every notification item's HMAC verified (hex key ADYEN_HMAC_KEY,
// imported once per isolate), AUTHORISATION items decided once per pspReference, refused or
// not, or recorded as not scored with the reason; only then "[accepted]".
import { OpenAPIHono } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { fromAuthorisation, NotificationSchema } from "../../tasks/fraud/sources/adyen";
import { verifyItem } from "../../tasks/fraud/sources/adyen-signature";
import type { AppEnv } from "../http/services";
import { parseBody, readJson } from "../http/validation";
import { merchantOf, requireSchema } from "../../tasks/fraud/context";
import { record } from "../../tasks/fraud/record";
import { fromAdyenItem } from "../../tasks/fraud/outcomes/outcome";

export const adyenWebhook = new OpenAPIHono<AppEnv>();
adyenWebhook.post("/", async (c) => {
  const key = c.env.ADYEN_HMAC_KEY;
  if (!key) throw new ServiceError(503, "not_configured", "ADYEN_HMAC_KEY is not configured");
  const notification = parseBody(NotificationSchema, await readJson(c.req.raw));
  const items = notification.notificationItems.map((entry) => entry.NotificationRequestItem);

  const verified = await Promise.all(items.map((item) => verifyItem(item, key)));
  const forged = verified.indexOf(false);
  if (forged !== -1) {
    throw new ServiceError(401, "unauthorized", "Adyen HMAC signature verification failed", {
      field: `notificationItems.${forged}.NotificationRequestItem.additionalData.hmacSignature`,
    });
  }
  const stores = c.var.fraudStores(c.env);
  await requireSchema(stores);

  // In order: two items for the same card must see each other in their histories.
  for (const item of items.filter((entry) => entry.eventCode === "AUTHORISATION")) {
    const delivered = {
      eventId: `${item.pspReference}:${item.eventCode}`,
      provider: "adyen" as const,
      eventType: item.eventCode,
    };
    await record(
      c.env,
      { services: c.get("services"), stores },
      delivered,
      fromAuthorisation(item, merchantOf(c.env)),
    );
  }
  // Chargebacks and notifications of fraud label the payment their originalReference names.
  for (const item of items) {
    const outcome = fromAdyenItem(item);
    if (outcome !== undefined) await stores.recordOutcome(outcome);
  }
  return c.text("[accepted]");
});
