// Unit tests of the page's wording for multilateration (issue 31,
// static/js/util.js): a claim multilateration contradicted, a position it
// located, and the threat row's bare status. No browser needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { positionSourceText, verificationStatus, verificationText } from "../static/js/util.js";

test("a contradicted claim names the distance, residual and sensors", () => {
  const v = { status: "contradicted", distance_m: 1560.5, residual_m: 999.2, sensors: 5 };
  assert.equal(verificationText(v), "CONTRADICTED: the signal came from 1561 m away (residual 999 m, 5 sensors)");
  assert.equal(verificationStatus({ verification: v }), "contradicted");
  assert.equal(verificationStatus({ verification: "contradicted" }), "contradicted", "the threat row carries the status alone");
  assert.equal(verificationStatus({}), undefined);
  assert.match(verificationText({ status: "unverifiable", sensors: 2 }), /^unverifiable/);
  assert.equal(verificationText(undefined), undefined);
});

test("a multilaterated position says so, with its sensors and error", () => {
  assert.equal(positionSourceText({ position_source: "mlat", mlat: { sensors: 4, residual_m: 12, error_m: 37.4 } }), "multilateration: 4 sensors, error ±37 m");
  assert.match(positionSourceText({ position_source: "broadcast" }), /^broadcast/);
  assert.equal(positionSourceText({}), undefined);
});
