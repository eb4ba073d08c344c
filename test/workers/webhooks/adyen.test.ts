// Adyen notifications inside workerd, signed with Adyen's own HmacValidator.
import { describe, expect, it } from "vitest";
import { NotificationRequestItem } from "@adyen/api-library/lib/src/typings/notification/models";
import {
  adyenItem,
  deliverAdyen,
  storedDecisions,
  storedHistory,
  unique,
} from "../../support/workers/fraud";

describe("POST /v1/webhooks/adyen", () => {
  it("verifies every item, records AUTHORISATION decisions, then answers [accepted]", async () => {
    const alias = unique("A");
    const response = await deliverAdyen([
      adyenItem(alias),
      adyenItem(alias, { eventDate: "2019-10-01T12:05:00+00:00" }),
    ]);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("[accepted]");
    const decisions = await storedDecisions(`adyen:${alias}`);
    expect(decisions).toHaveLength(2);
    expect(decisions.map((row) => row.history_length)).toEqual([0, 1]);
  });

  it("a replayed notification keeps one decision and one history entry", async () => {
    const alias = unique("A");
    const item = adyenItem(alias);
    expect((await deliverAdyen([item])).status).toBe(200);
    expect((await deliverAdyen([item])).status).toBe(200);
    expect(await storedDecisions(`adyen:${alias}`)).toHaveLength(1);
    expect(await storedHistory(`adyen:${alias}`)).toHaveLength(1);
  });

  it("401 when any item's HMAC does not verify, storing nothing", async () => {
    const alias = unique("A");
    const forged = { ...adyenItem(alias), amount: { value: 1, currency: "USD" } };
    const response = await deliverAdyen([adyenItem(alias), forged]);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      field: "notificationItems.1.NotificationRequestItem.additionalData.hmacSignature",
    });
    expect(await storedDecisions(`adyen:${alias}`)).toHaveLength(0);
  });

  it("acknowledges other event codes without scoring them", async () => {
    const alias = unique("A");
    const response = await deliverAdyen([
      adyenItem(alias, { eventCode: NotificationRequestItem.EventCodeEnum.ReportAvailable }),
    ]);
    expect(await response.text()).toBe("[accepted]");
    expect(await storedDecisions(`adyen:${alias}`)).toHaveLength(0);
  });

  it("400 naming the field for a malformed notification", async () => {
    const response = await deliverAdyen([
      { ...adyenItem(unique("A")), amount: { value: "12", currency: "USD" } },
    ]);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      field: "notificationItems.0.NotificationRequestItem.amount.value",
    });
  });
});
