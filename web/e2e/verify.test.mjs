// Unit tests of the page's receipt verification (static/js/verify.js)
// against independent values: FIPS 180-4 / node's crypto for SHA-256, the
// RFC 6962 reference vectors, and leaf hashes computed by Go's encoding of
// the DSSE envelope (testdata/receipt_vectors.json, itself re-checked by
// web/vectors_test.go). No browser needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import {
  envelopeBytes, fromHex, leafHash, parseCheckpoint, rootFromInclusionProof, sha256, toHex, verifyReceipt,
} from "../static/js/verify.js";

const vec = JSON.parse(fs.readFileSync(new URL("./testdata/receipt_vectors.json", import.meta.url)));

test("sha256 matches FIPS 180-4 examples and node's crypto at every length to 300 bytes", () => {
  const enc = new TextEncoder();
  assert.equal(toHex(sha256(enc.encode("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(toHex(sha256(new Uint8Array())), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(
    toHex(sha256(enc.encode("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  for (let n = 0; n <= 300; n++) {
    const b = crypto.randomBytes(n);
    assert.equal(toHex(sha256(new Uint8Array(b))), crypto.createHash("sha256").update(b).digest("hex"), `length ${n}`);
  }
});

test("RFC 6962 leaf hashes", () => {
  for (const l of vec.rfc6962.leaves) assert.equal(toHex(leafHash(fromHex(l.input_hex))), l.leaf_hash);
});

test("RFC 6962 inclusion proofs lead to the reference roots, and altered ones do not", () => {
  const leaves = vec.rfc6962.leaves.map((l) => fromHex(l.leaf_hash));
  for (const c of vec.rfc6962.inclusion) {
    const proof = c.proof.map(fromHex);
    assert.equal(toHex(rootFromInclusionProof(c.index, c.size, leaves[c.index], proof)), c.root, `${c.index}/${c.size}`);
    if (proof.length) {
      const bad = proof.map((p) => p.slice());
      bad[0][0] ^= 1;
      assert.notEqual(toHex(rootFromInclusionProof(c.index, c.size, leaves[c.index], bad)), c.root);
      assert.throws(() => rootFromInclusionProof(c.index, c.size, leaves[c.index], proof.slice(1)), /shorter/);
    }
    assert.throws(() => rootFromInclusionProof(c.index, c.size, leaves[c.index], [...proof, proof[0] || leaves[0]]), /longer/);
    assert.throws(() => rootFromInclusionProof(c.size, c.size, leaves[0], proof), /beyond/);
  }
});

test("envelope bytes hash as Go's encoding does (HTML escapes, null signatures)", () => {
  for (const e of vec.envelopes) assert.equal(toHex(leafHash(envelopeBytes(e.envelope))), e.leaf_hash, JSON.stringify(e.envelope));
});

test("verifyReceipt accepts a good receipt and names the step that fails on a bad one", () => {
  const t = vec.envelope_tree;
  const rootB64 = Buffer.from(t.root, "hex").toString("base64");
  for (let i = 0; i < vec.envelopes.length; i++) {
    const r = {
      index: i,
      leaf_hash: vec.envelopes[i].leaf_hash,
      envelope: vec.envelopes[i].envelope,
      tree_size: t.size,
      root_hash: t.root,
      inclusion_proof: t.proofs[i],
      checkpoint: `example.org/log\n${t.size}\n${rootB64}\n\n\u2014 example.org/log AAAA\n`,
    };
    const ok = verifyReceipt(r);
    assert.ok(ok.ok, JSON.stringify(ok.steps));
    const tampered = verifyReceipt({ ...r, envelope: { ...r.envelope, payload: "e30K" } });
    assert.equal(tampered.ok, false);
    assert.equal(tampered.steps.find((s) => !s.ok).name, "leaf hash");
    const wrongRoot = verifyReceipt({ ...r, root_hash: vec.rfc6962.roots_by_size["3"] });
    assert.equal(wrongRoot.steps.find((s) => !s.ok).name, "inclusion proof");
    const staleCp = verifyReceipt({ ...r, checkpoint: `example.org/log\n${t.size + 1}\n${rootB64}\n` });
    assert.equal(staleCp.steps.find((s) => !s.ok).name, "checkpoint");
  }
  assert.equal(verifyReceipt({}).ok, false);
  assert.equal(verifyReceipt(null).ok, false);
});

test("parseCheckpoint reads a C2SP checkpoint and rejects malformed ones", () => {
  const root = Buffer.alloc(32, 7).toString("base64");
  const cp = parseCheckpoint(`cuasd.example/log\n42\n${root}\n\n\u2014 cuasd.example/log sigsig\n`);
  assert.equal(cp.origin, "cuasd.example/log");
  assert.equal(cp.size, 42n);
  assert.equal(cp.rootHex, "07".repeat(32));
  assert.equal(cp.signatures, 1);
  assert.throws(() => parseCheckpoint("o\n-1\n" + root), /tree size/);
  assert.throws(() => parseCheckpoint("o\n1\nAAAA"), /32 bytes/);
  assert.throws(() => parseCheckpoint("o\n1"), /three lines/);
});
