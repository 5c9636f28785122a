package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/internal/testshared"
)

// The health paths the deploy recipes probe, under the default base path.
const (
	livenessPath  = "/api/cuas/healthz"
	readinessPath = "/api/cuas/readyz"
)

func deployDir() string { return filepath.Join(testshared.RepoRoot(), "deploy") }

func readDeploy(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// yamlDocs parses every document of a YAML file into generic values.
func yamlDocs(t *testing.T, rel string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readDeploy(t, rel)))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if err == io.EOF {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

// get walks a generic YAML/JSON value along keys (strings for maps, ints
// for lists); nil when a step is missing.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestDeployFilesParse(t *testing.T) {
	n := 0
	err := filepath.WalkDir(deployDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(deployDir(), p)
		switch filepath.Ext(p) {
		case ".yml", ".yaml":
			// yaml.v3 refuses duplicate keys, which other tools silently
			// resolve to the last one.
			yamlDocs(t, rel)
			n++
		case ".json":
			var v any
			if err := json.Unmarshal(readDeploy(t, rel), &v); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("parsed %d YAML/JSON files under deploy/, expected the full set of recipes", n)
	}
}

// serveFlags are the flags `cuasd serve -h` lists.
var (
	flagsOnce sync.Once
	flagSet   map[string]bool
)

func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	flagsOnce.Do(func() {
		out, _ := exec.Command(cuasdBinary(t), "serve", "-h").CombinedOutput()
		flagSet = map[string]bool{}
		re := regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`)
		for _, m := range re.FindAllStringSubmatch(string(out), -1) {
			flagSet[m[1]] = true
		}
	})
	if len(flagSet) < 10 {
		t.Fatalf("cuasd serve -h listed %d flags", len(flagSet))
	}
	return flagSet
}

// checkEnvName fails unless name is CUAS_<FLAG> for a flag of serve.
func checkEnvName(t *testing.T, where, name string) {
	t.Helper()
	flag, ok := strings.CutPrefix(name, "CUAS_")
	if !ok {
		return
	}
	f := strings.ToLower(strings.ReplaceAll(flag, "_", "-"))
	if !serveFlags(t)[f] {
		t.Errorf("%s: %s names no flag of cuasd serve (no --%s)", where, name, f)
	}
}

// checkArgs fails unless every --flag in args is a flag of serve.
func checkArgs(t *testing.T, where string, args []string) {
	t.Helper()
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		f := strings.TrimLeft(a, "-")
		f, _, _ = strings.Cut(f, "=")
		if !serveFlags(t)[f] {
			t.Errorf("%s: %s is not a flag of cuasd serve", where, a)
		}
	}
}

var envLineRE = regexp.MustCompile(`(?m)^#?\s*(CUAS_[A-Z0-9_]+)=`)

func TestDeploySystemd(t *testing.T) {
	unit := string(readDeploy(t, "systemd/cuasd.service"))
	dirs := map[string][]string{}
	section := ""
	for _, l := range strings.Split(unit, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "["):
			section = strings.Trim(l, "[]")
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Errorf("unit line %q is not key=value", l)
			}
			dirs[section+"."+k] = append(dirs[section+"."+k], v)
		}
	}
	want := map[string]string{
		"Service.NoNewPrivileges": "yes",
		"Service.ProtectSystem":   "strict",
		"Service.Restart":         "on-failure",
		"Service.DynamicUser":     "yes",
		"Service.StateDirectory":  "cuasd",
		"Service.ProtectHome":     "yes",
		"Service.PrivateTmp":      "yes",
		"Install.WantedBy":        "multi-user.target",
	}
	for k, v := range want {
		if got := dirs[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(dirs["Service.EnvironmentFile"]) != 1 {
		t.Error("the unit reads no EnvironmentFile for the CUAS_* variables")
	}
	exec := strings.Fields(strings.Join(dirs["Service.ExecStart"], ""))
	if len(exec) < 2 || exec[1] != "serve" {
		t.Fatalf("ExecStart %q does not run cuasd serve", exec)
	}
	checkArgs(t, "ExecStart", exec[2:])
	// The data directory must be the StateDirectory, the one place
	// ProtectSystem=strict leaves writable.
	if i := slices.Index(exec, "--data-dir"); i < 0 || i+1 >= len(exec) || exec[i+1] != "/var/lib/cuasd" {
		t.Errorf("ExecStart %q does not put --data-dir in /var/lib/cuasd (StateDirectory=cuasd)", exec)
	}
	env := string(readDeploy(t, "systemd/cuasd.env"))
	names := envLineRE.FindAllStringSubmatch(env, -1)
	if len(names) < 5 {
		t.Errorf("cuasd.env shows %d CUAS_ variables", len(names))
	}
	for _, m := range names {
		checkEnvName(t, "systemd/cuasd.env", m[1])
	}

	// systemd's own parser, when it is installed: any remark is a failure
	// (unknown keys and bad values are only warnings to systemd).
	sa, err := exec0("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed: the unit was checked structurally only")
	}
	dir := t.TempDir()
	fixed := strings.ReplaceAll(unit, "/usr/local/bin/cuasd", cuasdBinary(t))
	p := filepath.Join(dir, "cuasd.service")
	if err := os.WriteFile(p, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runTool(sa, "verify", "--man=no", p)
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func exec0(name string) (string, error) { return exec.LookPath(name) }

func runTool(bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv()
	return cmd.CombinedOutput()
}

func TestDeployDockerfile(t *testing.T) {
	df := string(readDeploy(t, "Dockerfile"))
	var stages []string
	var final []string // instructions of the last stage
	joined := strings.ReplaceAll(df, "\\\n", " ")
	sc := bufio.NewScanner(strings.NewReader(joined))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "FROM ") {
			stages = append(stages, l)
			final = nil
		}
		final = append(final, l)
	}
	if len(stages) < 2 || !strings.Contains(stages[0], "golang:") {
		t.Fatalf("want a multi-stage build starting from a golang image, got %q", stages)
	}
	last := stages[len(stages)-1]
	if !strings.Contains(last, "distroless/static") && !strings.Contains(last, "scratch") {
		t.Errorf("final stage %q is not distroless/static or scratch", last)
	}
	if !regexp.MustCompile(`CGO_ENABLED=0\s+go build\s[^\n]*-o\s+\S+\s+\./cmd/cuasd\b`).MatchString(joined) {
		t.Error("the Dockerfile does not build ./cmd/cuasd with CGO_ENABLED=0")
	}
	if strings.Contains(df, "main.buildVersion") {
		src, err := os.ReadFile(filepath.Join(testshared.RepoRoot(), "cmd", "cuasd", "main.go"))
		if err != nil || !bytes.Contains(src, []byte("var buildVersion string")) {
			t.Error("-X main.buildVersion names no variable of cmd/cuasd")
		}
	}
	var user, entry string
	var expose []string
	for _, l := range final {
		f := strings.Fields(l)
		switch f[0] {
		case "USER":
			user = f[1]
		case "ENTRYPOINT":
			entry = l
		case "EXPOSE":
			expose = append(expose, f[1:]...)
		case "ENV":
			for _, kv := range f[1:] {
				if k, _, ok := strings.Cut(kv, "="); ok {
					checkEnvName(t, "Dockerfile ENV", k)
				}
			}
		}
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("final stage runs as %q, want a non-root user", user)
	}
	for _, p := range []string{"8080", "4222"} {
		if !slices.Contains(expose, p) {
			t.Errorf("EXPOSE %v lacks %s", expose, p)
		}
	}
	if !strings.Contains(entry, "cuasd") {
		t.Errorf("ENTRYPOINT %q does not run cuasd", entry)
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := os.Stat(filepath.Join(testshared.RepoRoot(), f)); err != nil {
			t.Errorf("the build copies %s from the repository root: %v", f, err)
		}
	}
}

// pod is the part of a pod template the checks read.
func podSpec(doc map[string]any) map[string]any {
	s, _ := get(doc, "spec", "template", "spec").(map[string]any)
	return s
}

func TestDeployKubernetes(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(deployDir(), "k8s"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]map[string]any{}
	var files []string
	for _, e := range entries {
		if e.Name() == "kustomization.yaml" {
			continue
		}
		files = append(files, e.Name())
		for _, d := range yamlDocs(t, "k8s/"+e.Name()) {
			k, _ := d["kind"].(string)
			if d["apiVersion"] == nil || k == "" || get(d, "metadata", "name") == nil {
				t.Errorf("k8s/%s: a document without apiVersion, kind or metadata.name", e.Name())
			}
			kinds[k] = append(kinds[k], d)
		}
	}
	// kustomization.yaml lists exactly the manifests.
	var listed []string
	for _, r := range get(yamlDocs(t, "k8s/kustomization.yaml")[0], "resources").([]any) {
		listed = append(listed, r.(string))
	}
	sort.Strings(listed)
	sort.Strings(files)
	if !slices.Equal(listed, files) {
		t.Errorf("kustomization resources %v, files %v", listed, files)
	}

	workloads := append(kinds["StatefulSet"], kinds["Deployment"]...)
	if len(workloads) != 1 {
		t.Fatalf("want one StatefulSet or Deployment, got %d", len(workloads))
	}
	w := workloads[0]
	spec := podSpec(w)
	podLabels, _ := get(w, "spec", "template", "metadata", "labels").(map[string]any)
	sec, _ := spec["securityContext"].(map[string]any)
	if sec["runAsNonRoot"] != true {
		t.Error("pod securityContext.runAsNonRoot is not true")
	}
	containers, _ := spec["containers"].([]any)
	if len(containers) != 1 {
		t.Fatalf("want one container, got %d", len(containers))
	}
	c := containers[0].(map[string]any)
	ports := map[string]int{}
	for _, p := range c["ports"].([]any) {
		ports[get(p, "name").(string)] = get(p, "containerPort").(int)
	}
	for probe, path := range map[string]string{"livenessProbe": livenessPath, "readinessProbe": readinessPath} {
		p := get(c, probe, "httpGet")
		if got := get(p, "path"); got != path {
			t.Errorf("%s path %v, want %s", probe, got, path)
		}
		port := get(p, "port")
		if name, ok := port.(string); ok && ports[name] == 0 {
			t.Errorf("%s probes port %q, which the container does not declare", probe, name)
		}
	}
	csec, _ := c["securityContext"].(map[string]any)
	if csec["readOnlyRootFilesystem"] != true || csec["allowPrivilegeEscalation"] != false {
		t.Errorf("container securityContext %v: want readOnlyRootFilesystem true and allowPrivilegeEscalation false", csec)
	}
	if d := get(csec, "capabilities", "drop"); !slices.Contains(anyStrings(d), "ALL") {
		t.Errorf("container does not drop ALL capabilities: %v", d)
	}
	if get(c, "resources", "requests", "cpu") == nil || get(c, "resources", "requests", "memory") == nil || get(c, "resources", "limits", "memory") == nil {
		t.Errorf("container resources %v: want cpu and memory requests and a memory limit", c["resources"])
	}
	if get(c, "args", 0) != "serve" {
		t.Errorf("container args %v do not run serve", c["args"])
	}
	for _, e := range c["env"].([]any) {
		checkEnvName(t, "k8s container env", get(e, "name").(string))
	}
	for _, cm := range kinds["ConfigMap"] {
		for k := range get(cm, "data").(map[string]any) {
			checkEnvName(t, "k8s ConfigMap", k)
		}
		if get(cm, "data", "CUAS_REPLICAS") != "3" {
			t.Errorf("ConfigMap CUAS_REPLICAS = %v, want 3 on a NATS cluster", get(cm, "data", "CUAS_REPLICAS"))
		}
	}
	// The Service and the PodDisruptionBudget select the pods.
	matches := func(sel any) bool {
		m, _ := sel.(map[string]any)
		if len(m) == 0 {
			return false
		}
		for k, v := range m {
			if podLabels[k] != v {
				return false
			}
		}
		return true
	}
	if len(kinds["Service"]) == 0 || len(kinds["PodDisruptionBudget"]) == 0 {
		t.Fatal("want a Service and a PodDisruptionBudget")
	}
	for _, s := range kinds["Service"] {
		if !matches(get(s, "spec", "selector")) {
			t.Errorf("Service %v selects no cuasd pod", get(s, "metadata", "name"))
		}
	}
	for _, p := range kinds["PodDisruptionBudget"] {
		if !matches(get(p, "spec", "selector", "matchLabels")) {
			t.Error("the PodDisruptionBudget selects no cuasd pod")
		}
		if r, _ := get(w, "spec", "replicas").(int); r < 2 {
			t.Errorf("%d replicas: a PodDisruptionBudget with minAvailable cannot allow a drain", r)
		}
	}
	if k, _ := w["kind"].(string); k == "StatefulSet" {
		found := false
		for _, s := range kinds["Service"] {
			if get(s, "metadata", "name") == get(w, "spec", "serviceName") {
				found = true
			}
		}
		if !found {
			t.Errorf("StatefulSet serviceName %v is not a Service of the manifests", get(w, "spec", "serviceName"))
		}
	}
}

func anyStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// composeEnv are dummy values for the variables the compose file requires.
var composeEnv = []string{"CUASD_NATS_PASSWORD=test-password-1", "SENSOR_NATS_PASSWORD=test-password-2", "GRAFANA_ADMIN_PASSWORD=test-password-3"}

func TestDeployCompose(t *testing.T) {
	doc := yamlDocs(t, "compose/docker-compose.yml")[0]
	services, _ := doc["services"].(map[string]any)
	var natsSvcs, cuasdSvcs []string
	for name, s := range services {
		switch img, _ := get(s, "image").(string); {
		case img == "nats:2":
			natsSvcs = append(natsSvcs, name)
			if cmd := anyStrings(get(s, "command")); !slices.Equal(cmd, []string{"-c", "/etc/nats/nats.conf"}) {
				t.Errorf("%s: command %v does not load the cluster configuration", name, cmd)
			}
		case strings.HasPrefix(img, "cuasd"):
			cuasdSvcs = append(cuasdSvcs, name)
		}
	}
	sort.Strings(natsSvcs)
	sort.Strings(cuasdSvcs)
	if len(natsSvcs) != 3 || len(cuasdSvcs) != 2 {
		t.Fatalf("want 3 nats:2 and 2 cuasd services, got %v and %v", natsSvcs, cuasdSvcs)
	}
	for _, want := range []string{"prometheus", "grafana"} {
		if services[want] == nil {
			t.Errorf("no %s service", want)
		}
	}
	instances := map[string]bool{}
	for _, name := range cuasdSvcs {
		env, _ := get(services[name], "environment").(map[string]any)
		for k := range env {
			checkEnvName(t, "compose "+name, k)
		}
		if env["CUAS_REPLICAS"] != "3" {
			t.Errorf("%s: CUAS_REPLICAS = %v, want 3", name, env["CUAS_REPLICAS"])
		}
		inst, _ := env["CUAS_INSTANCE"].(string)
		if inst == "" || instances[inst] {
			t.Errorf("%s: CUAS_INSTANCE %q is empty or shared", name, inst)
		}
		instances[inst] = true
		url, _ := env["CUAS_NATS_URL"].(string)
		for _, n := range natsSvcs {
			if !strings.Contains(url, "@"+n+":4222") {
				t.Errorf("%s: CUAS_NATS_URL does not list %s:4222", name, n)
			}
		}
		if get(services[name], "read_only") != true {
			t.Errorf("%s: root filesystem is not read-only", name)
		}
	}
	// Every bind-mounted file exists.
	for name, s := range services {
		for _, v := range anyStrings(get(s, "volumes")) {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") {
				if _, err := os.Stat(filepath.Join(deployDir(), "compose", src)); err != nil {
					t.Errorf("%s mounts %s: %v", name, src, err)
				}
			}
		}
	}

	// The NATS configuration: routes to every node, JetStream, and
	// nats-server's own parser (built from go.mod's module) accepts it.
	conf := string(readDeploy(t, "compose/nats.conf"))
	for _, n := range natsSvcs {
		if !strings.Contains(conf, "nats-route://"+n+":6222") {
			t.Errorf("nats.conf has no route to %s", n)
		}
	}
	cmd := exec.Command(natsServerBinary(t), "-t", "-c", filepath.Join(deployDir(), "compose", "nats.conf"))
	cmd.Env = append(cleanEnv(), append(composeEnv, "NATS_SERVER_NAME=nats-1")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("nats-server -t rejects compose/nats.conf: %v\n%s", err, out)
	}

	// prometheus.yml scrapes both instances.
	prom := yamlDocs(t, "prometheus/prometheus.yml")[0]
	targets := anyStrings(get(prom, "scrape_configs", 0, "static_configs", 0, "targets"))
	for _, n := range cuasdSvcs {
		if !slices.Contains(targets, n+":8080") {
			t.Errorf("prometheus.yml does not scrape %s:8080 (targets %v)", n, targets)
		}
	}

	// Docker Compose's own validation, when a compose tool is installed.
	var tool []string
	if p, err := exec.LookPath("docker-compose"); err == nil {
		tool = []string{p}
	} else if p, err := exec.LookPath("docker"); err == nil && exec.Command(p, "compose", "version").Run() == nil {
		tool = []string{p, "compose"}
	}
	if tool == nil {
		t.Skip("neither docker compose nor docker-compose installed: the compose file was checked structurally only")
	}
	c := exec.Command(tool[0], append(tool[1:], "-f", filepath.Join(deployDir(), "compose", "docker-compose.yml"), "config", "-q")...)
	c.Env = append(cleanEnv(), composeEnv...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Errorf("%s config: %v\n%s", strings.Join(tool, " "), err, out)
	}
}

// alertRule is one rule of deploy/prometheus/alerts.yml.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string      `yaml:"name"`
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(readDeploy(t, "prometheus/alerts.yml")))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	var rules []alertRule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

func TestDeployAlertRules(t *testing.T) {
	rules := alertRules(t)
	seen := map[string]bool{}
	for _, r := range rules {
		switch {
		case r.Alert == "" || r.Expr == "":
			t.Errorf("rule %+v lacks alert or expr", r)
		case seen[r.Alert]:
			t.Errorf("alert %s defined twice", r.Alert)
		case r.Labels["severity"] != "critical" && r.Labels["severity"] != "warning":
			t.Errorf("alert %s: severity %q, want critical or warning", r.Alert, r.Labels["severity"])
		case r.Annotations["summary"] == "":
			t.Errorf("alert %s has no summary", r.Alert)
		}
		seen[r.Alert] = true
	}
	// The four conditions each have a rule.
	for _, want := range []string{"CuasdIngestStalled", "CuasdDecodeRejectsSpiking", "CuasdConsumerLag", "CuasdLedgerAppendFailing"} {
		if !seen[want] {
			t.Errorf("no alert %s", want)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not installed under CI=true: .ci/run installs it (apt-get install prometheus)")
		}
		t.Skip("promtool not installed (apt-get install prometheus): rules checked structurally only")
	}
	dir := filepath.Join(deployDir(), "prometheus")
	for _, args := range [][]string{
		{"check", "rules", filepath.Join(dir, "alerts.yml")},
		{"check", "config", filepath.Join(dir, "prometheus.yml")},
		{"test", "rules", filepath.Join(dir, "alerts_test.yml")},
	} {
		if out, err := runTool(promtool, args...); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every shipped alert rule has a promtool case in alerts_test.yml that
// fires it, and a rule firing on any increase() of a counter (a failure,
// drop or reject; not a traffic guard with an offset) has one that fires
// on a single event: a series going from 0 to 1 (issue 24, item 2).
// promtool itself runs the cases in TestDeployAlertRules.
func TestDeployAlertRulesAllTested(t *testing.T) {
	var f struct {
		Tests []struct {
			InputSeries []struct {
				Values string `yaml:"values"`
			} `yaml:"input_series"`
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(readDeploy(t, "prometheus/alerts_test.yml"), &f); err != nil {
		t.Fatal(err)
	}
	fires, firesOnFirst := map[string]bool{}, map[string]bool{}
	single := regexp.MustCompile(`^(0 )+(1 ?)+$`)
	onIncrease := regexp.MustCompile(`increase\(cuasd_\w+(\{[^}]*\})?\[\w+\]\)\)\s*>\s*0`)
	for _, c := range f.Tests {
		first := false
		for _, s := range c.InputSeries {
			first = first || single.MatchString(strings.TrimSpace(s.Values))
		}
		for _, a := range c.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
				firesOnFirst[a.Alertname] = firesOnFirst[a.Alertname] || first
			}
		}
	}
	for _, r := range alertRules(t) {
		switch {
		case !fires[r.Alert]:
			t.Errorf("alert %s: no case in alerts_test.yml fires it", r.Alert)
		case onIncrease.MatchString(r.Expr) && !firesOnFirst[r.Alert]:
			t.Errorf("alert %s counts increases, and no case fires it on a single event (values 0 ... 0 1 ... 1)", r.Alert)
		}
	}
}

// metricRE finds metric names in PromQL; label names never start with
// these prefixes.
var (
	metricRE  = regexp.MustCompile(`\b((?:cuasd|http|process|go)_[a-z0-9_]+)\b(\{[^}]*\})?`)
	matcherRE = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
)

// promqlRefs are the expressions of the alert rules and of the dashboard.
func promqlRefs(t *testing.T) map[string]string {
	t.Helper()
	refs := map[string]string{}
	for _, r := range alertRules(t) {
		refs["alert "+r.Alert] = r.Expr
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(readDeploy(t, "grafana/cuasd-dashboard.json"), &dash); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			refs[fmt.Sprintf("panel %q target %d", p.Title, i)] = tg.Expr
			n++
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			refs["variable "+v.Name] = v.Definition
		}
	}
	if n < 10 {
		t.Errorf("the dashboard has %d queries", n)
	}
	return refs
}

// exposition is a scrape of /metrics: metric name → label names seen.
type exposition map[string]map[string]bool

func scrape(ctx context.Context, url string) (exposition, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	e := exposition{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lineRE := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? `)
	labelRE := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if e[m[1]] == nil {
			e[m[1]] = map[string]bool{}
		}
		for _, l := range labelRE.FindAllStringSubmatch(m[3], -1) {
			e[m[1]][l[1]] = true
		}
	}
	return e, sc.Err()
}

// TestDeployMetricNames starts a real cuasd, drives it until every metric
// the recipes use has a sample (invalid frames, a Mode S reply from an
// unknown aircraft, a stream filled until it refuses frames), and checks
// each metric name and label matcher of the alert rules and the dashboard
// against its /metrics. It also probes the documented health paths.
func TestDeployMetricNames(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cuasd")
	}
	refs := promqlRefs(t)
	used := map[string]map[string]bool{} // metric → label names matched on
	where := map[string]string{}
	for w, expr := range refs {
		for _, m := range metricRE.FindAllStringSubmatch(expr, -1) {
			if used[m[1]] == nil {
				used[m[1]] = map[string]bool{}
				where[m[1]] = w
			}
			for _, l := range matcherRE.FindAllStringSubmatch(m[2], -1) {
				if l[1] != "instance" && l[1] != "job" { // added by the scrape
					used[m[1]][l[1]] = true
				}
			}
		}
	}
	if len(used) < 15 {
		t.Fatalf("found %d metric names in the rules and the dashboard", len(used))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	// --demo feeds the pipeline, the gate and the ledger; a small CUAS_RAW
	// fills up so that publishing fails (cuasd_frames_dropped_total).
	// A rule file gives the alert metrics (a webhook nobody answers),
	// --history the history recorder's, a UDP input the kernel-drop
	// counter's.
	rules := filepath.Join(dir, "alerts.yaml")
	if err := os.WriteFile(rules, []byte("sinks:\n  - name: hook\n    webhook: http://127.0.0.1:9/hook\n"+
		"rules:\n  - name: any\n    sinks: [hook]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, base := startCuasd(ctx, t, dir, "cuasd-metrics", "--demo", "--http-addr", "127.0.0.1:0",
		"--nats-listen", "off", "--data-dir", filepath.Join(dir, "data"), "--raw-max-bytes", "256KiB", "--alerts", rules, "--history",
		"--json-udp", "127.0.0.1:0")
	root := strings.TrimSuffix(base, "/api/cuas")
	for _, p := range []string{livenessPath, readinessPath} {
		if err := waitReady(ctx, root+p); err != nil {
			t.Errorf("GET %s (the probe path of the recipes): %v", p, err)
		}
	}
	post := func(frames ...string) int {
		body, _ := json.Marshal(map[string]any{"frames": frames, "sensor": "deploytest"})
		code, _ := postIngest(ctx, http.DefaultClient, base, body)
		return code
	}
	// A frame failing its CRC and a Mode S reply (DF20) whose address no
	// squitter announced, both from shared/vectors/adsb.json.
	post("8d4ca251204994b1c36e60a5343d", "A0001839CA3800315800007448D9")
	var lastExpo exposition
	next := 0
	for {
		e, err := scrape(ctx, root+"/metrics")
		if err == nil {
			lastExpo = e
			missing := 0
			for m := range used {
				if e[m] == nil {
					missing++
				}
			}
			if missing == 0 {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
		// Fill CUAS_RAW with distinct 14-byte frames (each one is stored:
		// de-duplication is by content and receive time).
		frames := make([]string, 200)
		for i := range frames {
			frames[i] = fmt.Sprintf("%028X", next)
			next++
		}
		body, _ := json.Marshal(map[string]any{"frames": frames, "sensor": "filler", "recv_time_unix_ns": time.Now().UnixNano()})
		_, _ = postIngest(ctx, http.DefaultClient, base, body)
		time.Sleep(300 * time.Millisecond)
	}
	names := make([]string, 0, len(used))
	for m := range used {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		labels, ok := lastExpo[m]
		if !ok {
			t.Errorf("%s (used by %s) is not exposed by cuasd serve", m, where[m])
			continue
		}
		for l := range used[m] {
			if !labels[l] {
				t.Errorf("%s (used by %s) is matched on label %q, which cuasd does not set on it", m, where[m], l)
			}
		}
	}
	t.Logf("%d metric names of the alert rules and the dashboard checked against a running cuasd", len(names))
}
