// POST /v1/webhooks/adyen: every notification item's HMAC verified (hex key ADYEN_HMAC_KEY),
// AUTHORISATION items scored and recorded, and only then "[accepted]".
import { Hono } from "hono";
import { ServiceError } from "../../errors/service-error";
import { decide } from "../../tasks/fraud/decide";
import { fromAuthorisation, NotificationSchema, verifyItem } from "../../tasks/fraud/sources/adyen";
import type { AppEnv } from "../services";
import { parseBody, readJson } from "../validation";
import { fraudContext } from "./fraud-context";

export const adyenWebhook = new Hono<AppEnv>().post("/v1/webhooks/adyen", async (c) => {
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

  const authorisations = items.filter((item) => item.eventCode === "AUTHORISATION");
  if (authorisations.length > 0) {
    const { scorer, decisions, histories, merchant } = await fraudContext(c.env, c.get("services"));
    // In order: two items for the same card must see each other in their histories.
    for (const item of authorisations) {
      await decide(scorer, decisions, histories, {
        eventId: `${item.pspReference}:${item.eventCode}`,
        provider: "adyen",
        eventType: item.eventCode,
        transaction: fromAuthorisation(item, merchant),
      });
    }
  }
  return c.text("[accepted]");
});
