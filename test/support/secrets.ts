// Secrets the test Worker runs with; tests sign webhooks with the same values.
export const TEST_SECRETS = {
  API_KEYS: "test-key-1,test-key-2",
  STRIPE_WEBHOOK_SECRET: "whsec_test_secret",
  ADYEN_HMAC_KEY: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
};
