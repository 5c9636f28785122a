package httpapi

import "net/http"

// Honesty is the disclosure of GET /v1/honest: exactly the seven string
// fields of the interface contract (docs/INTERFACE.md). Every sentence must be true of this service
// as built; tests pin the facts each one states.
type Honesty struct {
	Doctrine      string `json:"doctrine"`
	Lambda        string `json:"lambda"`
	DSSESignature string `json:"dsse_signature"`
	SLSA          string `json:"slsa"`
	SignalTrust   string `json:"signal_trust"`
	Errors        string `json:"errors"`
	Corpus        string `json:"corpus"`
}

// DoctrineLabel is the doctrine version the service implements.
const DoctrineLabel = "v11"

// honesty builds the disclosure for the signing mode in force.
func honesty(signingMode string) Honesty {
	return Honesty{
		Doctrine: DoctrineLabel,
		Lambda: "Λ is a conjecture, not a theorem: a 13-axis decision aid that ranks tracks for a human. " +
			"It is not a proof of safety, and nothing is engaged because of it: every gate answer carries " +
			"human_decision_required=true and engagement output is decision support only. " +
			"The continuous gate holds decisions (issue 33): a decision rises as soon as Λ reaches its band and falls only " +
			"after Λ stayed below the band's threshold minus a margin for a dwell time (GET /v1/lambda), so the board can show " +
			"a decision Λ alone no longer gives; raw_decision and the receipts say what Λ alone gave. Whether a track is an " +
			"aircraft, a drone or unknown is read from its unauthenticated claims.",
		DSSESignature: signatureStatement(signingMode),
		SLSA: "SLSA level L1 is the stated supply-chain level of the doctrine, not an attestation of this binary: " +
			"no signed provenance is generated for it; `go version -m cuasd` lists the modules built in.",
		SignalTrust: "Broadcast Remote ID, ADS-B (1090ES) and civilian MAVLink are unauthenticated and spoofable: " +
			"every decoded field (identity, position, altitude, velocity, status) is a claim by the transmitter, " +
			"not ground truth. MAVLink v2 signatures are verified only when a signing key is supplied. " +
			"Field sensors (WarDragon/DragonSync over ZeroMQ, ESP32 scanners over serial, UDP JSON forwarders) relay what they " +
			"decoded as unsigned JSON: cuasd can check neither the drone's broadcast nor the sensor's decoding, " +
			"and a sensor's reported position is a claim too. " +
			"A frame's time is its receiver's own timestamp where the receiver gives one (Beast, AVR, Remote ID, MAVLink), " +
			"mapped to UTC by a per-sensor clock model and never placed after the frame arrived; a track's time_source says " +
			"whether its times came from a GPS clock, the receiver's own clock or the arrival. " +
			"Frames a reconnecting feeder re-sends (stamped back inside the time its clock already covered, repeating remembered " +
			"frames or arriving far faster than their timestamps advance) are dropped and counted (cuasd_frames_resent_total); " +
			"a receiver restarting with its counter inside that span can lose up to 0.5 s of its frames, up to two minutes " +
			"when its recording is replayed in a burst, counted in cuasd_frames_resent_live_total. " +
			"A transmission several receivers hear is one position of its track: another receiver's copy of a position report " +
			"heard within 2 s, and a position older than the track's newest (a slower receiver), are skipped and counted " +
			"(cuasd_positions_skipped_total); a frame only a slower receiver heard is lost when a newer one came first. " +
			"Two receivers' frames are ordered by their own clocks, related by the position reports both heard (so receivers " +
			"bursting at once after an outage give each transmission once); until two receivers share a report, and for two " +
			"that never do, their frames are ordered by their times mapped to UTC, which a burst holds at the arrivals. " +
			"A product named by a DJI DroneID product type or a Self-ID text (\"DJI Mavic 3\") is an unauthenticated claim: " +
			"the drone-database record it matches says what the sender claims to be, not what it is; an unknown product is shown as unknown, never guessed. " +
			"Where three or more receivers with GPS-timed or synchronised clocks hear a Mode S transmission, multilateration " +
			"locates the transmitter from the times of arrival and checks an ADS-B position claim against them: a contradicted claim " +
			"shows the signal did not come from where the transmitter says, a verified one where it came from, never who sent it; " +
			"a disagreement resting on one reception that arrived late (a reflection) gives no verdict; " +
			"the receivers' configured positions and clocks are trusted; a position a receiver states itself (Cuas-Sensor-Position) " +
			"is a claim that a configured one overrides, and a receiver lying about it misplaces every fix it takes part in; " +
			"a GPS-timed receiver's fixed timestamp delay is learnt from the ADS-B positions it hears.",
		Errors: "Malformed input returns an error (an RFC 9457 application/problem+json 4xx answer naming the reason; " +
			"a request Go's HTTP server cannot parse at all, such as a path with a bad percent-escape, gets net/http's own " +
			"plain-text 400 before cuasd sees it); it is never silently accepted as valid.",
		Corpus: "The doctrine's formal corpus is stated as 749 declarations, 14 unique axioms and 163 sorries. " +
			"It is the doctrine's reference; it is not shipped with cuasd and this service does not check it.",
	}
}

func signatureStatement(mode string) string {
	switch mode {
	case "ed25519":
		return "Receipts are DSSE envelopes signed with Ed25519 over the DSSE pre-authentication encoding " +
			"(keys at /v1/receipt/keys) and appended to an RFC 6962 Merkle log whose SHA-256 digests are real, " +
			"with signed checkpoints. A valid signature shows which key recorded a decision, not that the decision was right."
	case "unsigned":
		return "Receipt signatures are a placeholder: the DSSE envelope is unsigned (this instance runs with --unsigned). " +
			"The Merkle digest is real SHA-256 (RFC 6962)."
	default:
		return "No receipt ledger runs in this process: no receipt is emitted, signed or anchored, " +
			"and the receipt endpoints answer with an error."
	}
}

// handleHonest serves GET /v1/honest.
func handleHonest(d Deps) http.HandlerFunc {
	h := honesty(d.SigningMode)
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, h)
	}
}
