package bus

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/internal/secretfile"
)

// Role is what a NATS client of the embedded server may do.
type Role string

// The roles of NATS clients. cuasd's own connection is always an admin,
// with a password that exists only in the process's memory.
const (
	// RoleSensor publishes raw frames (cuas.raw.>, cuas.in.>) and
	// receives the acknowledgements on its own inboxes (InboxPrefix);
	// nothing else.
	RoleSensor Role = "sensor"
	// RoleReader subscribes to the JSON events (EventSubjects, or
	// cuas.> without the internal subjects); nothing else, no inbox.
	RoleReader Role = "reader"
	// RoleAdmin may do anything, JetStream administration included.
	RoleAdmin Role = "admin"
)

// User is one credential of the embedded NATS listener (--nats-users).
type User struct {
	Name string `yaml:"user"`
	// Password may be a bcrypt hash ("$2a$..."), which nats-server checks
	// as such. It is never logged.
	Password string `yaml:"password"`
	// Role defaults to sensor.
	Role Role `yaml:"role"`
}

// internalUser is cuasd's own connection to its embedded server.
const internalUser = "cuasd-internal"

// anonymousUser is who a client without credentials is, when no users
// are configured: it may do what a sensor and a reader may, and no more.
const anonymousUser = "anonymous"

var userNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// LoadUsers reads a --nats-users YAML file: a list of {user, password,
// role}.
func LoadUsers(path string) ([]User, error) {
	// A regular file of at most 1 MiB (issue 32: secret files are bounded).
	b, err := secretfile.Read(path, 1<<20)
	if err != nil {
		return nil, err
	}
	var us []User
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&us); err != nil {
		return nil, err
	}
	if len(us) == 0 {
		return nil, errors.New("no users listed")
	}
	inboxes := map[string]string{}
	for i := range us {
		u := &us[i]
		if other, dup := inboxes[InboxPrefix(u.Name)]; dup {
			return nil, fmt.Errorf("users %q and %q would share the inbox prefix %s: rename one", other, u.Name, InboxPrefix(u.Name))
		}
		inboxes[InboxPrefix(u.Name)] = u.Name
		if !userNameRE.MatchString(u.Name) || u.Name == internalUser || u.Name == anonymousUser {
			return nil, fmt.Errorf("user %d: name must be 1-64 letters, digits, '.', '_' or '-' (and not %s or %s)", i, internalUser, anonymousUser)
		}
		if len(u.Password) < 12 {
			return nil, fmt.Errorf("user %q: password (or bcrypt hash) must have at least 12 characters", u.Name)
		}
		if u.Role == "" {
			u.Role = RoleSensor
		}
		if u.Role != RoleSensor && u.Role != RoleReader && u.Role != RoleAdmin {
			return nil, fmt.Errorf("user %q: role must be sensor, reader or admin, got %q", u.Name, u.Role)
		}
	}
	return us, nil
}

// Reply subjects (issue 32). A client that makes requests — a JetStream
// publish waiting for its acknowledgement, a request to the single-frame
// intake — receives the answers on an inbox subject it subscribes to.
// Subscribing to every inbox (`_INBOX.>`) would show a client every other
// client's answers, and cuasd's own: its consumers' deliveries (raw frames),
// key-value entries and JetStream API replies. So inboxes are private:
//
//   - cuasd's own connection uses InternalInboxPrefix, outside `_INBOX`,
//     which no other client may subscribe to (only admins may);
//   - a configured user U may subscribe to its own inboxes only,
//     InboxPrefix(U) = `_INBOX.U`, and sets that prefix in its client
//     (nats.go CustomInboxPrefix, `nats --inbox-prefix`, nats.py
//     inbox_prefix); `cuasd simulate` and `cuasd replay` do so from the
//     user in their URL;
//   - readers publish nothing, so they make no requests and have no inbox;
//   - anonymous clients (loopback, when no users are configured) keep
//     `_INBOX.>`: they are one principal, so they may read one another's
//     answers, but never cuasd's or a configured user's.
const (
	// InternalInboxPrefix is the inbox prefix of cuasd's own connections.
	InternalInboxPrefix = "_CUASD_INBOX"
	// inboxRoot is nats.go's default inbox prefix.
	inboxRoot = "_INBOX"
)

// InboxPrefix is the inbox prefix the configured NATS user named user must
// set in its client (`_INBOX.<user>`); Permissions lets it subscribe
// there and nowhere else under `_INBOX`. An empty user (anonymous) has
// the default prefix.
func InboxPrefix(user string) string {
	if user == "" {
		return inboxRoot
	}
	return inboxRoot + "." + Token(user)
}

// ClientInbox is the inbox option of a client of cuasd's NATS connecting
// to urls (comma-separated, as nats.Connect takes them): the user named in
// the first URL gets its private prefix (InboxPrefix), a URL without a user
// keeps nats.go's default. `cuasd simulate` and `cuasd replay` use it.
func ClientInbox(urls string) nats.Option {
	first, _, _ := strings.Cut(urls, ",")
	u, err := url.Parse(strings.TrimSpace(first))
	if err != nil || u.User == nil || u.User.Username() == "" {
		return func(*nats.Options) error { return nil }
	}
	return nats.CustomInboxPrefix(InboxPrefix(u.User.Username()))
}

// Permissions returns what a role may publish and subscribe to on the
// embedded server; nil for admin (everything). user is the user's name,
// whose inboxes a sensor may read (see InboxPrefix). These are also the
// permissions to configure for sensors and event consumers on an external
// cluster (docs/OPERATIONS.md).
func Permissions(r Role, user string) *server.Permissions {
	publish := &server.SubjectPermission{Allow: []string{RawPrefix + ".>", IntakePrefix + ".>"}}
	switch r {
	case RoleSensor:
		return &server.Permissions{
			Publish:   publish,
			Subscribe: &server.SubjectPermission{Allow: []string{InboxPrefix(user) + ".>"}},
		}
	case RoleReader:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Deny: []string{">"}},
			Subscribe: eventsOnly(),
		}
	case anonymousRole:
		sub := eventsOnly()
		sub.Allow = append(sub.Allow, inboxRoot+".>")
		return &server.Permissions{Publish: publish, Subscribe: sub}
	}
	return nil
}

// eventsOnly lets a client subscribe to the events, including with the
// wildcard `cuas.>` (so `nats sub 'cuas.>'` works), while nats-server
// withholds the pipeline's internal subjects (InternalPrefixes) from it at
// delivery.
func eventsOnly() *server.SubjectPermission {
	deny := make([]string, len(InternalPrefixes))
	for i, p := range InternalPrefixes {
		deny[i] = p + ".>"
	}
	return &server.SubjectPermission{Allow: []string{"cuas.>"}, Deny: deny}
}

// anonymousRole is the role of clients without credentials.
const anonymousRole Role = "anonymous"

// applySecurity sets the embedded server's users, permissions and TLS, and
// cuasd's own connection's credentials. Every client but cuasd itself is
// limited: without configured users, a client without credentials is
// "anonymous" (publish raw frames, subscribe to events); with users, there
// is no anonymous access at all. JetStream administration is left to
// cuasd's internal connection and to users with the admin role.
func applySecurity(so *server.Options, o *Options) ([]nats.Option, error) {
	var pw [24]byte
	if _, err := rand.Read(pw[:]); err != nil {
		return nil, err
	}
	internal := hex.EncodeToString(pw[:])
	so.Users = []*server.User{{Username: internalUser, Password: internal}}
	if len(o.Users) == 0 {
		so.Users = append(so.Users, &server.User{Username: anonymousUser, Permissions: Permissions(anonymousRole, "")})
		so.NoAuthUser = anonymousUser
	}
	for _, u := range o.Users {
		so.Users = append(so.Users, &server.User{Username: u.Name, Password: u.Password, Permissions: Permissions(u.Role, u.Name)})
	}
	copts := []nats.Option{nats.UserInfo(internalUser, internal)}
	if o.TLS != nil {
		so.TLSConfig, so.TLS = o.TLS, true
		so.AllowNonTLS = false
		if len(o.TLS.Certificates) == 0 || len(o.TLS.Certificates[0].Certificate) == 0 {
			return nil, errors.New("the NATS TLS configuration has no certificate")
		}
		copts = append(copts, nats.Secure(pinnedTLS(o.TLS.Certificates[0].Certificate[0])))
	}
	return copts, nil
}

// pinnedTLS is the client TLS configuration of cuasd's in-process
// connection to its own embedded server when the listener requires TLS.
// The certificate was issued for the name sensors dial, perhaps by a
// private CA, so the chain and name are not what to check here: the
// connection accepts exactly the certificate cuasd loaded (leaf, DER).
func pinnedTLS(leaf []byte) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // replaced by the pin below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], leaf) {
				return errors.New("the embedded NATS server presented a certificate other than --nats-tls-cert")
			}
			return nil
		},
	}
}

// describeUsers is a log-safe summary of the configured users (no secrets).
func describeUsers(us []User) string {
	if len(us) == 0 {
		return "none (anonymous clients may publish raw frames and read events)"
	}
	var b strings.Builder
	for i, u := range us {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(u.Name + "(" + string(u.Role) + ")")
	}
	return b.String()
}
