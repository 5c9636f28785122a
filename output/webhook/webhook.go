// Package webhook delivers alerts as signed HTTP POSTs (issue 19).
//
// The body is the alert JSON of package alert (format "cuas") or a Slack /
// Mattermost message {"text": ...} (format "slack"). Every request carries
//
//	X-Cuas-Alert-Id:    the alert's stable id (the same on every retry)
//	X-Cuas-Alert-State: open, update or resolved
//	X-Cuas-Signature:   sha256=<hex HMAC-SHA256 of the exact body under the sink's secret>
//
// A receiver verifies by computing HMAC-SHA256 over the raw body bytes it
// received (before any JSON parsing) with the shared secret and comparing
// it in constant time with the header (Verify does exactly that).
//
// 2xx is delivered; connection errors, timeouts, 408, 425, 429 and 5xx are
// retried by package alert with back-off; any other status is a permanent
// refusal. The URL is never logged (a Slack hook's path is its secret),
// nor is the secret.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/alert"
)

// Headers of a webhook request.
const (
	HeaderID        = "X-Cuas-Alert-Id"
	HeaderState     = "X-Cuas-Alert-State"
	HeaderSignature = "X-Cuas-Signature"
)

// Sign returns the X-Cuas-Signature value of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify says whether header is the signature of body under secret, in
// constant time.
func Verify(secret, body []byte, header string) bool {
	got, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	sig, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(sig, m.Sum(nil))
}

// Sink POSTs alerts to one URL.
type Sink struct {
	cfg    alert.SinkConfig
	url    string
	host   string
	client *http.Client
}

// New returns the sink of c (a webhook sink of a rule file).
func New(c alert.SinkConfig) (*Sink, error) {
	u, err := url.Parse(c.Webhook)
	if err != nil || c.Webhook == "" {
		return nil, &alert.Error{Sink: c.Name, Msg: "not a webhook URL"}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, &alert.Error{Sink: c.Name, Msg: "ca_file", Err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &alert.Error{Sink: c.Name, Msg: "ca_file " + c.CAFile + " holds no PEM certificate"}
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	timeout := c.TimeoutD
	if timeout > 0 {
		// The deliverer bounds each attempt; this is a backstop beyond
		// its deadline and the grace of alert.AckContext.
		timeout += alert.AckGrace
	}
	return &Sink{cfg: c, url: c.Webhook, host: u.Host, client: &http.Client{
		Transport: tr, Timeout: timeout,
		// A redirect could send the signed alert somewhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Send implements alert.Sink.
func (s *Sink) Send(ctx context.Context, m *alert.Message, body []byte) error {
	if s.cfg.Format == "slack" {
		body = slackBody(m)
	}
	actx, cancel := alert.AckContext(ctx) // a response just after a stall counts
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return alert.Permanent(errors.New("cannot build the request"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cuasd-alerts/1")
	req.Header.Set(HeaderID, m.ID)
	req.Header.Set(HeaderState, m.State)
	if len(s.cfg.Secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(s.cfg.Secret, body))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return s.redact(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusRequestTimeout || c == http.StatusTooEarly || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("%s answered %s", s.host, resp.Status)
	default:
		return alert.Permanent(fmt.Errorf("%s refused the alert: %s", s.host, resp.Status))
	}
}

// redact describes a transport error without the URL (whose path or query
// may be a secret), naming only the host.
func (s *Sink) redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if strings.Contains(msg, s.url) {
		msg = strings.ReplaceAll(msg, s.url, s.host)
	}
	return fmt.Errorf("POST to %s: %s", s.host, msg)
}

// slackBody is the message as Slack's and Mattermost's incoming webhooks
// take it.
func slackBody(m *alert.Message) []byte {
	icon := map[string]string{"critical": ":rotating_light:", "warning": ":warning:", "info": ":information_source:"}[m.Severity]
	if m.State == alert.StateResolved {
		icon = ":white_check_mark:"
	}
	text := fmt.Sprintf("%s *%s* — %s (alert %s", icon, m.Title, m.Message, m.ID)
	if m.Receipt != nil {
		text += fmt.Sprintf(", receipt %d", m.Receipt.Index)
	}
	b, _ := json.Marshal(map[string]string{"text": text + ")"})
	return b
}

// Output delivers one webhook sink's alerts from the durable stream.
type Output struct {
	d alert.Deliverer
}

// NewOutput returns the output of a webhook sink; d carries the stream,
// store, metrics and logger (its Sink and Config are set here).
func NewOutput(c alert.SinkConfig, d alert.Deliverer) (*Output, error) {
	s, err := New(c)
	if err != nil {
		return nil, err
	}
	d.Sink, d.Config = s, c
	return &Output{d: d}, nil
}

// Name implements output.Output; it names the sink, never its URL.
func (o *Output) Name() string { return "webhook " + o.d.Config.Name }

// Run implements output.Output.
func (o *Output) Run(ctx context.Context, _ output.Events, rep lifecycle.Reporter) error {
	return o.d.Run(ctx, rep)
}

var _ output.Output = (*Output)(nil)
