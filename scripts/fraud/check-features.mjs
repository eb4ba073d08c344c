#!/usr/bin/env node
/**
 * Independent JavaScript implementation of the feature spec in models/fraud-gru/manifest.json
 * (`features`), checked column by column against the Python featurizer's fixtures
 * (test/fixtures/fraud-gru/features.json, windows.json). A reference for the edge featurizer.
 *
 *   node scripts/fraud/check-features.mjs
 */
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync('models/fraud-gru/manifest.json', 'utf8'));
const spec = manifest.features;
const UNKNOWN = '__unknown__';

function labelIndex(block, key) {
  const classes = spec[block].classes;
  const i = classes.indexOf(key);
  return i >= 0 ? i : classes.indexOf(UNKNOWN);
}
function digitBlocks(out, block, value) {
  for (const seen of spec[block].digits) {
    const d = value % 10;
    value = Math.floor(value / 10);
    const k = seen.indexOf(d);
    for (let j = 0; j < seen.length; j++) out.push(j === k ? 1 : 0);
  }
}
export function featurize(tx) {
  const out = [];
  const state = String(tx['Merchant State'] ?? '') || 'missing_value';
  digitBlocks(out, 'merchantState', labelIndex('merchantState', state));
  const zipText = String(tx.Zip ?? '').trim();
  const zip = zipText === '' || !Number.isFinite(Number(zipText)) ? 0 : Math.trunc(Number(zipText));
  digitBlocks(out, 'zip', zip);
  digitBlocks(out, 'merchantName', labelIndex('merchantName', String(tx['Merchant Name']).trim()));
  digitBlocks(out, 'merchantCity', labelIndex('merchantCity', String(tx['Merchant City'])));
  digitBlocks(out, 'mcc', labelIndex('mcc', String(Math.trunc(Number(tx.MCC)))));
  for (const c of spec.useChip.classes) out.push(c === String(tx['Use Chip']) ? 1 : 0);
  const errors = String(tx['Errors?'] ?? '') || 'missing_value';
  for (const c of spec.errors.classes) out.push(c === errors ? 1 : 0);
  const [hh, mm] = String(tx.Time).split(':').map(Number);
  const tMs = Date.UTC(Number(tx.Year), Number(tx.Month) - 1, Number(tx.Day), hh, mm);
  out.push((tMs - spec.time.minMs) / (spec.time.maxMs - spec.time.minMs));
  const amount = Number.parseFloat(String(tx.Amount).replace('$', ''));
  out.push((Math.log(Math.max(1, amount)) - spec.amount.min) / (spec.amount.max - spec.amount.min));
  return Float32Array.from(out);
}

let worst = 0;
let checked = 0;
function compare(got, want, label) {
  if (got.length !== want.length || got.length !== spec.count) throw new Error(`${label}: length ${got.length} vs ${want.length}`);
  for (let i = 0; i < got.length; i++) {
    const diff = Math.abs(got[i] - Math.fround(want[i]));
    worst = Math.max(worst, diff);
    if (diff > 1e-6) throw new Error(`${label}: column ${i} ${got[i]} vs ${want[i]}`);
  }
  checked++;
}
const features = JSON.parse(readFileSync('test/fixtures/fraud-gru/features.json', 'utf8'));
for (const item of features.items) compare(featurize(item.transaction), item.features, item.why);
const windows = JSON.parse(readFileSync('test/fixtures/fraud-gru/windows.json', 'utf8'));
for (const h of windows.histories) {
  const pad = manifest.window - h.transactions.length;
  h.window.forEach((row, t) => {
    if (t < pad) compare(new Float32Array(spec.count), row, `${h.why} pad ${t}`);
    else compare(featurize(h.transactions[t - pad]), row, `${h.why} step ${t}`);
  });
}
console.log(`JS featurizer matches the Python fixtures: ${checked} vectors x ${spec.count} columns, max |diff| ${worst}`);
