// The page's only door to cuasd: the public HTTP API under the base path.
// Every non-2xx answer is RFC 9457 problem+json; its `detail` is what the
// operator is shown. 501 means the subsystem is not built into this binary,
// which the page shows as "not available in this build" and otherwise
// tolerates: no exception escapes to the console for it.
//
// Bearer tokens. When cuasd runs with --auth-tokens, the API answers 401
// (WWW-Authenticate: Bearer) without a token. The page then asks for one
// (signin.js draws the dialog) and every call that met the 401 waits for it
// and is sent again, so the pollers do not hammer the server with 401s
// while the dialog is open. The token lives in sessionStorage only (one
// tab, gone when it closes); it goes out in the Authorization header, and
// as ?access_token= on the EventSource URL alone (EventSource cannot send
// headers and cuasd accepts the parameter on the stream only). It is never
// logged and never put in the address bar. A 403 (the token's role is too
// low) is an ordinary error showing cuasd's detail: asking again for a
// token would not help and must not loop.

const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute("content") || "";

/** config holds what the server rendered into index.html. */
export const config = {
  base: meta("cuasd:base"),
  tileURL: meta("cuasd:tile-url"),
  tileAttribution: meta("cuasd:tile-attribution"),
};

/** url turns an API path such as "/v1/tracks" into the path under the base. */
export function url(path) {
  return config.base + path;
}

const storeKey = () => "cuasd:token:" + (config.base || "/");
let memoryToken = null; // used when sessionStorage is unavailable (storage disabled)

/** token is the bearer token in use, or null when none was given. */
export function token() {
  try {
    return sessionStorage.getItem(storeKey()) || null;
  } catch {
    return memoryToken;
  }
}

// Listeners of the sign-in state: onNeedToken(detail, rejected) is called
// when a call met a 401 (rejected: a token was sent and refused);
// onTokenChange(token) after setToken.
const listeners = { need: [], change: [] };
let waiting = []; // resolve functions of calls waiting for a token
let asked = false;

/** onNeedToken registers fn(detail, rejected), called once per needed sign-in. */
export function onNeedToken(fn) {
  listeners.need.push(fn);
}

/** onTokenChange registers fn(token), called after every setToken. */
export function onTokenChange(fn) {
  listeners.change.push(fn);
}

/**
 * setToken stores t for this tab (null clears it) and sends again every
 * call that was waiting for a token.
 */
export function setToken(t) {
  try {
    if (t) sessionStorage.setItem(storeKey(), t);
    else sessionStorage.removeItem(storeKey());
  } catch {
    memoryToken = t || null;
  }
  if (t) {
    asked = false;
    const w = waiting;
    waiting = [];
    for (const resolve of w) resolve();
  }
  for (const fn of listeners.change) fn(t || null);
}

// needToken waits until a token is set. The first caller asks the
// listeners (the dialog); the others just wait with it.
function needToken(detail, rejected, signal) {
  return new Promise((resolve, reject) => {
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const abort = () => {
      waiting = waiting.filter((f) => f !== done);
      reject(new DOMException("aborted", "AbortError"));
    };
    if (signal?.aborted) return abort();
    signal?.addEventListener("abort", abort);
    waiting.push(done);
    if (!asked) {
      asked = true;
      for (const fn of listeners.need) fn(detail, rejected);
    }
  });
}

/**
 * streamURL is the EventSource URL of an API path, with the token as
 * access_token when there is one.
 */
export function streamURL(path) {
  const t = token();
  if (!t) return url(path);
  return url(path) + (path.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(t);
}

/** ApiError is a failed call: `status` is 0 when cuasd could not be reached. */
export class ApiError extends Error {
  constructor(status, detail, problem = null) {
    super(detail);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem;
  }
  /** notBuilt is true when the endpoint's subsystem is not in this build. */
  get notBuilt() {
    return this.status === 501;
  }
  /** forbidden is true when the token's role is too low for the endpoint. */
  get forbidden() {
    return this.status === 403;
  }
  /** describe is the sentence to show the operator. */
  describe() {
    if (this.status === 501) return "Not available in this build.";
    if (this.status === 403) return "Not permitted: " + this.message;
    if (this.status === 0) return "cuasd is not reachable: " + this.message;
    return this.message;
  }
}

/** describeError is the sentence to show the operator for any failure: an ApiError's describe(), else the error as text. */
export function describeError(e) {
  return e instanceof ApiError ? e.describe() : String(e);
}

async function call(path, init) {
  for (;;) {
    const sent = token();
    const headers = { ...init.headers };
    if (sent) headers.Authorization = "Bearer " + sent;
    let res;
    try {
      res = await fetch(url(path), { ...init, headers });
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new ApiError(0, e.message || "network error");
    }
    if (res.status === 401 && bearerChallenge(res)) {
      const problem = await readBody(res);
      const now = token();
      if (now && now !== sent) continue; // signed in again meanwhile: use the new token
      if (now) setToken(null); // refused: forget it and ask again
      await needToken(problemDetail(res, problem), Boolean(sent), init.signal);
      continue;
    }
    return finish(res);
  }
}

// bearerChallenge is true when a 401 asks for a bearer token (not, say, a
// proxy's Basic challenge, which the browser handles itself).
function bearerChallenge(res) {
  const wa = res.headers.get("www-authenticate");
  return !wa || /^\s*bearer\b/i.test(wa);
}

function problemDetail(res, body) {
  return (body && typeof body === "object" && body.detail) || `${res.status} ${res.statusText}`;
}

async function readBody(res) {
  const ctype = res.headers.get("content-type") || "";
  try {
    return ctype.includes("json") ? await res.json() : await res.text();
  } catch {
    return null;
  }
}

async function finish(res) {
  const body = await readBody(res);
  if (!res.ok) throw new ApiError(res.status, problemDetail(res, body), body && typeof body === "object" ? body : null);
  return body;
}

/** get fetches a JSON (or text) resource. */
export function get(path, { signal } = {}) {
  return call(path, { headers: { Accept: "application/json, text/plain" }, signal });
}

/** post sends a JSON body. */
export function post(path, body) {
  return call(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
}

/**
 * list pulls the array out of a list answer, whatever the name of its
 * field: the fragments of the OpenAPI document name them after the resource
 * (`tracks`, `geofences`, `drones`, `components`...).
 */
export function list(body, ...names) {
  if (Array.isArray(body)) return body;
  if (!body || typeof body !== "object") return [];
  for (const n of names) if (Array.isArray(body[n])) return body[n];
  for (const v of Object.values(body)) if (Array.isArray(v)) return v;
  return [];
}
