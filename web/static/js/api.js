// The page's only door to cuasd: the public HTTP API under the base path.
// Every non-2xx answer is RFC 9457 problem+json; its `detail` is what the
// operator is shown. 501 means the subsystem is not built into this binary,
// which the page shows as "not available in this build" and otherwise
// tolerates: no exception escapes to the console for it.

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
  /** describe is the sentence to show the operator. */
  describe() {
    if (this.status === 501) return "Not available in this build.";
    if (this.status === 0) return "cuasd is not reachable: " + this.message;
    return this.message;
  }
}

async function call(path, init) {
  let res;
  try {
    res = await fetch(url(path), init);
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, e.message || "network error");
  }
  const ctype = res.headers.get("content-type") || "";
  let body = null;
  try {
    body = ctype.includes("json") ? await res.json() : await res.text();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const detail = (body && typeof body === "object" && body.detail) || `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, detail, body && typeof body === "object" ? body : null);
  }
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
