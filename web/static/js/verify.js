// Receipt verification in the browser: the RFC 6962 leaf hash of a DSSE
// envelope, its inclusion proof up to the root, and the root and size of the
// C2SP checkpoint. It is a pure module (no DOM), so node's test runner checks
// it against the RFC 6962 reference vectors (web/e2e/verify.test.mjs).
//
// SHA-256 is implemented here rather than taken from WebCrypto: crypto.subtle
// exists only in secure contexts, and a watch-floor cuasd is often reached
// over plain http on a LAN address. The inputs are a few hundred bytes.
//
// The envelope signature and the checkpoint's note signature are not checked
// here (that needs the public key and Ed25519); `cuasd verify` does that
// offline, and the page says so.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** sha256 returns the SHA-256 digest (FIPS 180-4) of bytes. */
export function sha256(bytes) {
  const len = bytes.length;
  const padded = new Uint8Array(((len + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[len] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(len / 0x20000000));
  view.setUint32(padded.length - 4, (len << 3) >>> 0);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const W = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) W[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(W[i - 15], 7) ^ rotr(W[i - 15], 18) ^ (W[i - 15] >>> 3);
      const s1 = rotr(W[i - 2], 17) ^ rotr(W[i - 2], 19) ^ (W[i - 2] >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) >>> 0;
      const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      h = g; g = f; f = e; e = (d + t1) >>> 0;
      d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(i * 4, H[i]);
  return out;
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(s) {
  if (typeof s !== "string" || s.length % 2 || /[^0-9a-fA-F]/.test(s)) throw new Error("not hex: " + String(s).slice(0, 20));
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function fromBase64(s) {
  const bin = atob(s);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

/** leafHash is RFC 6962's SHA-256(0x00 || data). */
export function leafHash(data) {
  return sha256(concat(Uint8Array.of(0), data));
}

/** nodeHash is RFC 6962's SHA-256(0x01 || left || right). */
export function nodeHash(left, right) {
  return sha256(concat(Uint8Array.of(1), left, right));
}

// goString encodes s as Go's encoding/json does: JSON.stringify plus Go's
// HTML-safe escapes of <, >, & and U+2028/U+2029.
function goString(s) {
  return JSON.stringify(String(s)).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

/**
 * envelopeBytes is the envelope as the ledger hashes it: Go's compact
 * encoding of {payloadType, payload, signatures: [{keyid, sig}]}, fields in
 * that order.
 */
export function envelopeBytes(env) {
  const sigs = (env.signatures || []).map((s) => `{"keyid":${goString(s.keyid ?? "")},"sig":${goString(s.sig ?? "")}}`);
  const sigJSON = env.signatures === null || env.signatures === undefined ? "null" : `[${sigs.join(",")}]`;
  const text = `{"payloadType":${goString(env.payloadType ?? "")},"payload":${goString(env.payload ?? "")},"signatures":${sigJSON}}`;
  return new TextEncoder().encode(text);
}

/**
 * rootFromInclusionProof computes the root of a tree of `size` leaves from
 * the leaf at `index` and its audit path (RFC 9162 section 2.1.3.2). It
 * throws when the proof has the wrong length for index and size.
 */
export function rootFromInclusionProof(index, size, leaf, proof) {
  index = BigInt(index);
  size = BigInt(size);
  if (index >= size) throw new Error(`index ${index} is beyond the tree size ${size}`);
  let fn = index;
  let sn = size - 1n;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) throw new Error("the proof is longer than the path");
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) throw new Error("the proof is shorter than the path");
  return r;
}

/**
 * parseCheckpoint reads a C2SP tlog-checkpoint (signed note or bare body):
 * origin, decimal tree size, base64 root hash.
 */
export function parseCheckpoint(text) {
  const lines = String(text).split("\n");
  if (lines.length < 3) throw new Error("a checkpoint has at least three lines");
  const size = lines[1];
  if (!/^(0|[1-9][0-9]*)$/.test(size)) throw new Error("the checkpoint's second line is not a tree size");
  const root = fromBase64(lines[2]);
  if (root.length !== 32) throw new Error("the checkpoint's root hash is not 32 bytes");
  const sigs = lines.filter((l) => l.startsWith("\u2014 ")).length;
  return { origin: lines[0], size: BigInt(size), rootHex: toHex(root), signatures: sigs };
}

/**
 * verifyReceipt checks what a browser can check of a receipt (the answer of
 * GET /v1/receipt/{index} or POST /v1/receipt/emit). It returns
 * {ok, steps: [{name, ok, detail}]}; ok is true only when every step passed.
 */
export function verifyReceipt(r) {
  const steps = [];
  const step = (name, fn) => {
    try {
      const detail = fn();
      steps.push({ name, ok: true, detail });
      return true;
    } catch (e) {
      steps.push({ name, ok: false, detail: e.message });
      return false;
    }
  };
  const src = r && typeof r === "object" ? r : {};
  const env = src.envelope || src.entry?.envelope;
  const index = src.index ?? src.entry?.index;
  const leafHex = src.leaf_hash || src.entry?.leaf_hash;
  let leaf = null;
  step("leaf hash", () => {
    if (!env) throw new Error("the answer has no envelope");
    leaf = leafHash(envelopeBytes(env));
    if (leafHex && toHex(leaf) !== String(leafHex).toLowerCase()) {
      throw new Error(`SHA-256(0x00‖envelope) is ${toHex(leaf)}, the ledger says ${leafHex}`);
    }
    return toHex(leaf);
  });
  step("inclusion proof", () => {
    if (!leaf) throw new Error("no leaf hash");
    if (src.tree_size === undefined || !src.root_hash) throw new Error("the answer has no tree size or root");
    const proof = (src.inclusion_proof || []).map(fromHex);
    const root = toHex(rootFromInclusionProof(index, src.tree_size, leaf, proof));
    if (root !== String(src.root_hash).toLowerCase()) throw new Error(`the proof leads to ${root}, not the root ${src.root_hash}`);
    return `entry ${index} is in the tree of ${src.tree_size}`;
  });
  step("checkpoint", () => {
    if (!src.checkpoint) throw new Error("the answer has no checkpoint");
    const cp = parseCheckpoint(src.checkpoint);
    if (cp.size !== BigInt(src.tree_size)) throw new Error(`the checkpoint is for size ${cp.size}, not ${src.tree_size}`);
    if (cp.rootHex !== String(src.root_hash).toLowerCase()) throw new Error("the checkpoint's root differs from the proof's root");
    return `${cp.origin}, size ${cp.size}, ${cp.signatures ? cp.signatures + " signature(s), not checked here" : "unsigned"}`;
  });
  return { ok: steps.every((s) => s.ok), steps };
}

/** decodePayload returns the envelope's payload parsed as JSON (the in-toto statement), or null. */
export function decodePayload(env) {
  try {
    return JSON.parse(new TextDecoder().decode(fromBase64(env.payload)));
  } catch {
    return null;
  }
}
