// The drone database browser: the filters of GET /v1/drones/database and a
// table whose rows open the record (specs with their sources, telemetry
// surfaces, sourced notes).
import { describeError, get } from "./api.js";
import { dataTable, debounce, el, replace, safeHref } from "./util.js";

const roleNames = (r) => String(r).replaceAll("_", " ");

export class DronesView {
  constructor({ form, out }) {
    Object.assign(this, { form, out });
    this.loaded = false;
    this.open = null;
    const reload = debounce(() => this.load(), 200);
    form.addEventListener("input", reload);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.load();
    });
  }

  query() {
    const p = new URLSearchParams();
    for (const f of this.form.elements) if (f.name && f.value) p.set(f.name, f.value.trim());
    const s = p.toString();
    return s ? "?" + s : "";
  }

  async load() {
    let body;
    try {
      body = await get("/v1/drones/database" + this.query());
    } catch (e) {
      replace(this.out, el("p", { class: e.notBuilt ? "unavailable" : "error", text: "Drone database: " + describeError(e) }));
      return;
    }
    const drones = Array.isArray(body?.drones) ? body.drones : Array.isArray(body) ? body : [];
    if (!this.loaded) {
      this.loaded = true;
      this.fillChoices(drones);
    }
    this.render(drones, body?.total);
  }

  // fillChoices offers the countries, roles and telemetry kinds present in
  // the unfiltered database.
  fillChoices(drones) {
    const uniq = (xs) => [...new Map(xs.filter((x) => x && x[0]).map((x) => [x[0], x])).values()].sort((a, b) => a[1].localeCompare(b[1]));
    const add = (name, pairs) => {
      const sel = this.form.elements[name];
      for (const [v, label] of pairs) sel.append(el("option", { value: v, text: label }));
    };
    add("country", uniq(drones.map((d) => [d.country?.code, `${d.country?.name || d.country?.code} (${d.country?.code})`])));
    add("role", uniq(drones.map((d) => [d.role, roleNames(d.role)])));
    add("telemetry", uniq(drones.flatMap((d) => (d.telemetry_surfaces || []).map((s) => [s.kind, roleNames(s.kind)]))));
  }

  render(drones, total) {
    const rows = [];
    for (const d of drones) {
      const tr = el(
        "tr",
        {
          class: "clickable",
          tabindex: 0,
          "aria-expanded": String(this.open === d.id),
          on: {
            click: () => this.toggle(d.id, drones, total),
            keydown: (e) => {
              if (e.key === "Enter" || e.key === " ") {
                e.preventDefault();
                this.toggle(d.id, drones, total);
              }
            },
          },
        },
        el("td", {}, el("strong", { text: d.name }), el("div", { class: "maker", text: d.manufacturer })),
        el("td", { text: d.country?.name || d.country?.code || "" }),
        el("td", { text: d.side }),
        el("td", { text: d.group ? "Group " + d.group : (d.counters_groups || []).length ? "counters " + d.counters_groups.join(",") : "—" }),
        el("td", { text: roleNames(d.role) }),
        el("td", {}, el("div", { class: "chips" }, (d.telemetry_surfaces || []).map((s) => el("span", { class: "chip", text: roleNames(s.kind) })))),
      );
      rows.push(tr);
      if (this.open === d.id) rows.push(el("tr", { class: "drone-detail" }, el("td", { colspan: 6 }, detailOf(d))));
    }
    replace(
      this.out,
      el("p", { class: "note", text: `${drones.length} of ${total ?? drones.length} systems. Identifiers a broadcast claims are candidates for a match, never an identification.` }),
      dataTable("drones-table", ["System", "Country", "Side", "Group", "Role", "Telemetry"], rows),
    );
  }

  toggle(id, drones, total) {
    this.open = this.open === id ? null : id;
    this.render(drones, total);
    this.out.querySelector(`tr[aria-expanded="true"]`)?.focus();
  }
}

function detailOf(d) {
  const specs = Object.entries(d.specs || {}).filter(([, v]) => v !== null && v !== undefined);
  const src = d.spec_sources || {};
  return el(
    "div",
    {},
    specs.length
      ? el(
          "dl",
          { class: "kv" },
          specs.flatMap(([k, v]) => [
            el("dt", { text: roleNames(k) }),
            el("dd", {}, String(v), safeHref(src[k]) ? el("span", {}, " ", el("a", { href: safeHref(src[k]), rel: "noopener noreferrer", target: "_blank", text: "source" })) : null),
          ]),
        )
      : el("p", { class: "note", text: "No published figures." }),
    el("h3", { text: "Telemetry surfaces" }),
    el(
      "ul",
      {},
      (d.telemetry_surfaces || []).map((s) =>
        el("li", {}, el("strong", { text: roleNames(s.kind) }), s.band ? ` (${s.band})` : "", s.notes ? ": " + s.notes : "", (s.detectable_by || []).length ? ` — detectable by ${s.detectable_by.map(roleNames).join(", ")}` : ""),
      ),
    ),
    el("h3", { text: "Notes" }),
    el(
      "ul",
      {},
      (d.notes || []).map((n) => el("li", {}, n.text, " ", safeHref(n.source?.url) ? el("a", { href: safeHref(n.source.url), rel: "noopener noreferrer", target: "_blank", text: n.source.publisher || n.source.title || "source" }) : null)),
    ),
  );
}
