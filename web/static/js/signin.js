// The sign-in dialog. cuasd started with --auth-tokens answers 401 to a
// call without a valid bearer token; api.js then calls onNeedToken and
// holds the call until a token is set. This module asks the operator for
// the token in a modal <dialog> (focus moves into it, Escape closes it,
// labelled by its heading), stores it with setToken (sessionStorage: this
// tab only) and offers "Sign out" while a token is held. The token is
// never logged, never shown and never put in the address bar; the input is
// emptied as soon as it is read.
import { onNeedToken, onTokenChange, setToken, token } from "./api.js";

// A token travels in an HTTP header: printable ASCII without spaces
// (cuasd's own are "cuas_" and base64url).
const TOKEN_RE = /^[\x21-\x7e]+$/;

/**
 * SignIn wires the dialog. parts: dialog, form, input, error (the alert
 * line), cancel, open (the top bar's "Sign in" button), signOut; onState(s)
 * is told "required" while calls wait for a token and "ok" once one is set.
 */
export class SignIn {
  constructor(parts) {
    Object.assign(this, parts);
    this.signOut.hidden = !token();
    onNeedToken((detail, rejected) => this.ask(detail, rejected));
    onTokenChange((t) => {
      this.signOut.hidden = !t;
    });
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
    this.cancel.addEventListener("click", () => this.close());
    // Escape closes a modal dialog by itself ("cancel"); the calls keep
    // waiting and the top bar's "Sign in" button opens it again.
    this.dialog.addEventListener("close", () => {
      this.input.value = "";
      if (this.open.hidden === false) this.open.focus({ preventScroll: true });
    });
    this.open.addEventListener("click", () => this.show());
    this.signOut.addEventListener("click", () => {
      setToken(null);
      // Reloading drops everything the token let the page see; the next
      // call meets the 401 again and asks for a token.
      location.reload();
    });
  }

  // ask opens the dialog for a call that met a 401. rejected: the token
  // that was sent is not valid (cuasd's detail says so).
  ask(detail, rejected) {
    this.showError(rejected ? detail : "");
    this.open.hidden = false;
    this.onState?.("required");
    this.show();
  }

  show() {
    if (!this.dialog.open) this.dialog.showModal();
    this.input.focus();
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  submit() {
    const t = this.input.value.trim();
    this.input.value = "";
    if (!t) {
      this.showError("Enter the access token.");
      this.input.focus();
      return;
    }
    if (!TOKEN_RE.test(t)) {
      this.showError("An access token is printable ASCII without spaces.");
      this.input.focus();
      return;
    }
    this.showError("");
    this.open.hidden = true;
    this.close();
    this.onState?.("ok");
    setToken(t); // the waiting calls are sent again with it
  }

  showError(text) {
    this.error.textContent = text;
    this.error.hidden = !text;
    if (text) this.input.setAttribute("aria-invalid", "true");
    else this.input.removeAttribute("aria-invalid");
  }
}
