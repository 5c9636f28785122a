// The decoder playground: paste hex, pick a protocol, see the decoded JSON
// or the problem cuasd reports (its detail and the fields at fault).
import { ApiError, get, list, post } from "./api.js";
import { el, replace } from "./util.js";

const endpoints = {
  adsb: "/v1/ads-b/decode",
  remoteid: "/v1/remote-id/decode",
  mavlink: "/v1/mavlink/parse",
};

/**
 * cprFormat returns "even" or "odd" for a DF17/18 airborne or surface
 * position frame (the F bit, message bit 54), else null.
 */
export function cprFormat(hex) {
  if (!/^[0-9a-fA-F]{28}$/.test(hex)) return null;
  const v = BigInt("0x" + hex);
  const df = Number(v >> 107n);
  const tc = Number((v >> 75n) & 0x1fn);
  if ((df !== 17 && df !== 18) || !((tc >= 5 && tc <= 18) || (tc >= 20 && tc <= 22))) return null;
  return (v >> 58n) & 1n ? "odd" : "even";
}

/**
 * requestFor builds the request body from the text area, one frame per
 * line. Whitespace inside a line is dropped, so hex copied with spaces
 * works. One ADS-B line is {"hex"}; two ADS-B position frames of opposite
 * CPR format are a pair {"even", "odd", "newest"} (the second line taken as
 * received last) for a global position; other ADS-B lines are a batch
 * {"frames"}. Remote ID and MAVLink take the lines as one byte stream.
 */
export function requestFor(proto, text) {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/\s+/g, ""))
    .filter(Boolean);
  if (proto !== "adsb") return { hex: lines.join("") };
  if (lines.length === 1) return { hex: lines[0] };
  const bare = lines.map((l) => l.replace(/^\*/, "").replace(/;$/, ""));
  const f = bare.map(cprFormat);
  if (lines.length === 2 && f[0] && f[1] && f[0] !== f[1]) {
    return { [f[0]]: bare[0], [f[1]]: bare[1], newest: f[1] };
  }
  return { frames: lines };
}

export class Decoder {
  constructor({ form, hex, out, samples, samplesWrap }) {
    Object.assign(this, { form, hex, out, samples, samplesWrap });
    this.sampleList = [];
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.decode();
    });
    form.addEventListener("change", (e) => {
      if (e.target.name === "proto") this.fillSamples();
    });
    samples.addEventListener("change", () => this.useSample());
    hex.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.decode();
      }
    });
  }

  get proto() {
    return this.form.querySelector('input[name="proto"]:checked').value;
  }

  /** loadSamples offers the service's verified sample vectors, when it has them. */
  async loadSamples() {
    try {
      this.sampleList = list(await get("/v1/samples"), "samples");
    } catch {
      this.sampleList = []; // optional: the playground works without them
    }
    this.fillSamples();
  }

  fillSamples() {
    const mine = this.sampleList.filter((s) => s.protocol === this.proto);
    this.samplesWrap.hidden = mine.length === 0;
    replace(
      this.samples,
      el("option", { value: "", text: "—" }),
      mine.map((s) => el("option", { value: s.id, text: `${s.id}${s.valid === false ? " (invalid)" : ""}` })),
    );
  }

  useSample() {
    const s = this.sampleList.find((x) => x.id === this.samples.value);
    if (!s || !s.input) return;
    const inp = s.input;
    // A pair is shown in receive order: the newest frame last.
    this.hex.value = typeof inp.hex === "string" ? inp.hex : inp.newest === "even" ? [inp.odd, inp.even].join("\n") : [inp.even, inp.odd].join("\n");
    this.hex.focus();
  }

  async decode() {
    const text = this.hex.value;
    if (!text.trim()) {
      replace(this.out, el("div", { class: "problem", role: "alert" }, "Paste some hex first."));
      return;
    }
    const proto = this.proto;
    replace(this.out, el("p", { class: "pending", text: "Decoding…" }));
    try {
      const res = await post(endpoints[proto], requestFor(proto, text));
      replace(
        this.out,
        el("p", { class: "claim", text: "Decoded claims, not verified facts." }),
        el("pre", { class: "decoded", tabindex: 0, "aria-label": "Decoded JSON", text: JSON.stringify(res, null, 2) }),
      );
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(0, String(e));
      const fields = Array.isArray(err.problem?.errors) ? err.problem.errors : [];
      replace(
        this.out,
        el(
          "div",
          { class: "problem", role: "alert" },
          el("strong", { text: err.status ? `${err.status} ${err.problem?.title || ""}`.trim() : "Error" }),
          el("div", { class: "problem-detail", text: err.describe() }),
          fields.length ? el("ul", {}, fields.map((f) => el("li", {}, el("code", { text: f.field }), ": " + f.message))) : null,
        ),
      );
    }
  }
}
