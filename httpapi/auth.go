package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/internal/secretfile"
)

// Role is what a bearer token may do. A role includes the roles before it.
type Role int

// The roles, weakest first.
const (
	RoleNone Role = iota
	// RoleReader reads: every GET, and the pure computations (decoders,
	// swarm topology of posted tracks).
	RoleReader
	// RoleSensor also publishes frames (POST /v1/ingest/{protocol}).
	RoleSensor
	// RoleOperator also acts: evaluate (which records a receipt), emit
	// receipts, edit geofences and the allow-list.
	RoleOperator
	// RoleAdmin may do everything.
	RoleAdmin
)

var roleNames = map[string]Role{"reader": RoleReader, "sensor": RoleSensor, "operator": RoleOperator, "admin": RoleAdmin}

// ParseRole maps a role name to its Role.
func ParseRole(s string) (Role, error) {
	if r, ok := roleNames[s]; ok {
		return r, nil
	}
	return RoleNone, fmt.Errorf("unknown role %q (reader, sensor, operator or admin)", s)
}

// String returns the role's name.
func (r Role) String() string {
	for n, v := range roleNames {
		if v == r {
			return n
		}
	}
	return "none"
}

// TokenEntry is one line of the --auth-tokens file: a named token stored
// as the hex SHA-256 of its secret, never the secret itself.
type TokenEntry struct {
	Name   string `yaml:"name"`
	Role   string `yaml:"role"`
	SHA256 string `yaml:"sha256"`
}

type token struct {
	name string
	role Role
	hash [32]byte
}

// Authenticator checks bearer tokens against the configured hashes.
type Authenticator struct {
	tokens []token
}

var tokenNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// NewAuthenticator validates the entries.
func NewAuthenticator(entries []TokenEntry) (*Authenticator, error) {
	a := &Authenticator{}
	seen := map[string]bool{}
	for i, e := range entries {
		if !tokenNameRE.MatchString(e.Name) {
			return nil, fmt.Errorf("auth token %d: name must be 1-64 letters, digits, '.', '_' or '-'", i)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("auth token %q: duplicate name", e.Name)
		}
		seen[e.Name] = true
		r, err := ParseRole(e.Role)
		if err != nil {
			return nil, fmt.Errorf("auth token %q: %w", e.Name, err)
		}
		h, err := hex.DecodeString(e.SHA256)
		if err != nil || len(h) != 32 {
			return nil, fmt.Errorf("auth token %q: sha256 must be 64 hex digits", e.Name)
		}
		t := token{name: e.Name, role: r}
		copy(t.hash[:], h)
		a.tokens = append(a.tokens, t)
	}
	if len(a.tokens) == 0 {
		return nil, errors.New("the token file lists no tokens")
	}
	return a, nil
}

// MaxTokensFile bounds a --auth-tokens file (thousands of tokens); like
// every file of secrets it must be a regular file (issue 32).
const MaxTokensFile = 1 << 20

// LoadTokens reads a --auth-tokens YAML file.
func LoadTokens(path string) (*Authenticator, error) {
	b, err := secretfile.Read(path, MaxTokensFile)
	if err != nil {
		return nil, err
	}
	var entries []TokenEntry
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return NewAuthenticator(entries)
}

// check returns the token's name and role. Every stored hash is compared
// in constant time, whatever matches, so timing reveals nothing.
func (a *Authenticator) check(secret string) (string, Role, bool) {
	sum := sha256.Sum256([]byte(secret))
	name, role, found := "", RoleNone, 0
	for i := range a.tokens {
		eq := subtle.ConstantTimeCompare(sum[:], a.tokens[i].hash[:])
		if eq == 1 {
			name, role = a.tokens[i].name, a.tokens[i].role
		}
		found |= eq
	}
	return name, role, found == 1
}

// NewToken returns a fresh random token and its file entry.
func NewToken(name string, role Role) (secret string, entry TokenEntry, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", TokenEntry{}, err
	}
	secret = "cuas_" + base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(secret))
	return secret, TokenEntry{Name: name, Role: role.String(), SHA256: hex.EncodeToString(sum[:])}, nil
}

type principalKey struct{}

type roleKey struct{}

// roleFrom is the role of the request's token (RoleAdmin when the API is
// open, since then nothing is restricted).
func roleFrom(r *http.Request) Role {
	if v, ok := r.Context().Value(roleKey{}).(Role); ok {
		return v
	}
	return RoleAdmin
}

// require guards a handler with a minimum role. With no Authenticator the
// API is open (cuasd refuses to start that way on a non-loopback address).
func require(a *Authenticator, min Role, next http.HandlerFunc) http.HandlerFunc {
	if a == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		secret, ok := strings.CutPrefix(h, "Bearer ")
		if h == "" && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/threats/stream") {
			// Browsers' EventSource cannot send headers: the stream alone
			// also takes the token as ?access_token= (RFC 6750 §2.3). Query
			// strings are never logged by cuasd.
			secret, ok = r.URL.Query().Get("access_token"), true
		}
		if !ok || secret == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cuasd"`)
			writeProblem(w, r, http.StatusUnauthorized, "a bearer token is required (Authorization: Bearer <token>)")
			return
		}
		name, role, ok := a.check(strings.TrimSpace(secret))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cuasd", error="invalid_token"`)
			writeProblem(w, r, http.StatusUnauthorized, "the bearer token is not valid")
			return
		}
		if role < min {
			writeProblem(w, r, http.StatusForbidden, fmt.Sprintf("this endpoint needs the %s role; token %q has %s", min, name, role))
			return
		}
		r = r.WithContext(contextWith(contextWith(r.Context(), principalKey{}, name), roleKey{}, role))
		next(w, r)
	}
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
