package deploycheck

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join(repoRoot, "deploy", "helm", "groundcrew")

// parts are the chart's workloads, each a Deployment and a Service.
var parts = []string{"search", "grounding", "rag", "notifier", "gateway"}

// rendered is a chart rendering decoded strictly into the Kubernetes API
// types, by kind and name.
type rendered struct {
	deployments     map[string]*appsv1.Deployment
	services        map[string]*corev1.Service
	claims          map[string]*corev1.PersistentVolumeClaim
	accounts        map[string]*corev1.ServiceAccount
	budgets         map[string]*policyv1.PodDisruptionBudget
	autoscalers     map[string]*autoscalingv2.HorizontalPodAutoscaler
	policies        map[string]*networkingv1.NetworkPolicy
	serviceMonitors map[string]*serviceMonitor
	ruleSets        map[string]*prometheusRule
}

// prometheusRule is the Prometheus Operator's PrometheusRule, decoded
// strictly like serviceMonitor.
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Record      string            `json:"record"`
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) the chart writes; decoding is strict, so a
// misspelt field fails here as the operator's schema would reject it.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		JobLabel  string               `json:"jobLabel"`
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// values reads the chart's ci/ values file (empty: none) and applies the
// --set style assignments on top.
func values(t *testing.T, file string, set ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if file != "" {
		v, err := chartutil.ReadValuesFile(filepath.Join(chartDir, "ci", file))
		if err != nil {
			t.Fatal(err)
		}
		vals = v
	}
	for _, s := range set {
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatalf("--set %s: %v", s, err)
		}
	}
	return vals
}

// render runs what `helm template gc deploy/helm/groundcrew` runs, in
// process.
func render(vals map[string]any) (string, error) {
	rel, err := install(vals)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

func install(vals map[string]any) (*release.Release, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = "gc", "groundcrew"
	return in.Run(chrt, vals)
}

// TestChartNotesWarnOfUnreachableServices: a disabled service without an
// externalAddr leaves its callers dialling loopback; the install notes
// say so, and name nothing when all is deployed.
func TestChartNotesWarnOfUnreachableServices(t *testing.T) {
	for _, tt := range []struct {
		set  []string
		want string
	}{
		{nil, ""},
		{[]string{"notifier.enabled=false"}, "WARNING: notifier is disabled"},
		{[]string{"notifier.enabled=false", "notifier.externalAddr=notifier.ops:50054"}, ""},
	} {
		rel, err := install(values(t, "", tt.set...))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(rel.Info.Notes, "WARNING"); got != (tt.want != "") || !strings.Contains(rel.Info.Notes, tt.want) {
			t.Errorf("--set %v: notes %q, want a warning %q", tt.set, rel.Info.Notes, tt.want)
		}
	}
}

// decode splits a manifest into documents and decodes each strictly into
// its kind's API type: unknown or misspelt fields, wrong types and
// duplicate keys fail.
func decode(t *testing.T, manifest string) *rendered {
	t.Helper()
	r := &rendered{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		claims: map[string]*corev1.PersistentVolumeClaim{}, accounts: map[string]*corev1.ServiceAccount{},
		budgets: map[string]*policyv1.PodDisruptionBudget{}, autoscalers: map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		policies: map[string]*networkingv1.NetworkPolicy{}, serviceMonitors: map[string]*serviceMonitor{},
		ruleSets: map[string]*prometheusRule{},
	}
	for _, doc := range strings.Split(manifest, "\n---") {
		doc = strings.TrimSpace(doc)
		if doc == "" || strings.Trim(doc, "-") == "" {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		var (
			obj  any
			name func() string
		)
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			o := &appsv1.Deployment{}
			obj, name = o, func() string { r.deployments[o.Name] = o; return o.Name }
		case "v1 Service":
			o := &corev1.Service{}
			obj, name = o, func() string { r.services[o.Name] = o; return o.Name }
		case "v1 PersistentVolumeClaim":
			o := &corev1.PersistentVolumeClaim{}
			obj, name = o, func() string { r.claims[o.Name] = o; return o.Name }
		case "v1 ServiceAccount":
			o := &corev1.ServiceAccount{}
			obj, name = o, func() string { r.accounts[o.Name] = o; return o.Name }
		case "policy/v1 PodDisruptionBudget":
			o := &policyv1.PodDisruptionBudget{}
			obj, name = o, func() string { r.budgets[o.Name] = o; return o.Name }
		case "autoscaling/v2 HorizontalPodAutoscaler":
			o := &autoscalingv2.HorizontalPodAutoscaler{}
			obj, name = o, func() string { r.autoscalers[o.Name] = o; return o.Name }
		case "networking.k8s.io/v1 NetworkPolicy":
			o := &networkingv1.NetworkPolicy{}
			obj, name = o, func() string { r.policies[o.Name] = o; return o.Name }
		case "monitoring.coreos.com/v1 PrometheusRule":
			o := &prometheusRule{}
			obj, name = o, func() string { r.ruleSets[o.Name] = o; return o.Name }
		case "monitoring.coreos.com/v1 ServiceMonitor":
			o := &serviceMonitor{}
			obj, name = o, func() string { r.serviceMonitors[o.Name] = o; return o.Name }
		default:
			t.Fatalf("rendered an object this test does not know: %s %s\n%s", meta.APIVersion, meta.Kind, doc)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s does not decode strictly into its API type: %v\n%s", meta.Kind, err, doc)
		}
		if name() == "" {
			t.Errorf("a %s without a name", meta.Kind)
		}
	}
	return r
}

func TestChartLints(t *testing.T) {
	for _, file := range []string{"", "notifier-only-values.yaml", "scaled-out-values.yaml", "search-replicas-values.yaml"} {
		lint := action.NewLint()
		lint.Strict, lint.Namespace = true, "groundcrew"
		res := lint.Run([]string{chartDir}, values(t, file))
		for _, err := range res.Errors {
			t.Errorf("helm lint --strict (values %q): %v", file, err)
		}
	}
}

func TestChartRenders(t *testing.T) {
	tests := []struct {
		name string
		file string
		set  []string
		// want are the parts rendered; check looks at what is special to
		// the value set.
		want  []string
		check func(t *testing.T, r *rendered)
	}{
		{
			name: "defaults",
			want: parts,
			check: func(t *testing.T, r *rendered) {
				for _, p := range []string{"search", "grounding", "rag", "notifier"} {
					d := r.deployments["gc-groundcrew-"+p]
					if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
						t.Errorf("%s: %d replicas, strategy %s; an embedded store wants 1 and Recreate", p, *d.Spec.Replicas, d.Spec.Strategy.Type)
					}
					if _, ok := r.claims["gc-groundcrew-"+p]; !ok {
						t.Errorf("%s has no PersistentVolumeClaim for its embedded store", p)
					}
				}
				if len(r.policies)+len(r.serviceMonitors)+len(r.autoscalers)+len(r.ruleSets) != 0 {
					t.Errorf("NetworkPolicies, ServiceMonitors, PrometheusRules or autoscalers rendered though off by default")
				}
				if _, ok := r.budgets["gc-groundcrew-gateway"]; !ok {
					t.Errorf("the gateway runs 2 replicas without a PodDisruptionBudget")
				}
				gw := container(r, "gateway")
				if got := env(gw, "NOTIFIER_ADDR"); got != "gc-groundcrew-notifier:50054" {
					t.Errorf("gateway NOTIFIER_ADDR = %q, want the notifier's Service", got)
				}
				if got := env(gw, "GATEWAY_ADDR"); got != ":8080" {
					t.Errorf("gateway GATEWAY_ADDR = %q, want :8080", got)
				}
				if ref := secretRef(gw, "GATEWAY_API_KEYS"); ref == nil || ref.Name != "groundcrew-api-keys" {
					t.Errorf("gateway GATEWAY_API_KEYS is not read from Secret groundcrew-api-keys: %+v", ref)
				}
				if ref := secretRef(gw, "TELEGRAM_WEBHOOK_SECRET"); ref != nil {
					t.Errorf("gateway TELEGRAM_WEBHOOK_SECRET from %+v though the notifier has no Secret", ref)
				}
				for _, p := range parts {
					c := container(r, p)
					if env(c, "GRPC_REFLECTION") != "false" || env(c, "ADMIN_PPROF") != "false" {
						t.Errorf("%s: reflection or pprof on by default", p)
					}
					if ref := secretRef(c, "GRPC_SHARED_TOKEN"); ref == nil || ref.Name != "groundcrew-grpc-token" {
						t.Errorf("%s: GRPC_SHARED_TOKEN is not read from Secret groundcrew-grpc-token", p)
					}
				}
			},
		},
		{
			name: "notifier disabled",
			set:  []string{"notifier.enabled=false"},
			want: []string{"search", "grounding", "rag", "gateway"},
			check: func(t *testing.T, r *rendered) {
				if got := env(container(r, "gateway"), "NOTIFIER_ADDR"); got != "" {
					t.Errorf("gateway dials a notifier that is not deployed: NOTIFIER_ADDR=%q", got)
				}
			},
		},
		{
			name: "one service only",
			file: "notifier-only-values.yaml",
			want: []string{"notifier"},
			check: func(t *testing.T, r *rendered) {
				c := container(r, "notifier")
				if got := env(c, "GROUNDING_ADDR"); got != "grounding.shared-groundcrew.svc:50052" {
					t.Errorf("notifier GROUNDING_ADDR = %q, want the external grounding", got)
				}
				if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "notifier-telegram" {
					t.Errorf("notifier envFrom = %+v, want Secret notifier-telegram", c.EnvFrom)
				}
				if got := env(c, "TELEGRAM_CHAT_ID"); got != "-1001234567890" {
					t.Errorf("TELEGRAM_CHAT_ID = %q", got)
				}
			},
		},
		{
			name: "search on PostgreSQL, three replicas",
			file: "search-replicas-values.yaml",
			want: parts,
			check: func(t *testing.T, r *rendered) {
				d := r.deployments["gc-groundcrew-search"]
				if *d.Spec.Replicas != 3 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
					t.Errorf("search: %d replicas, strategy %s; want 3, RollingUpdate", *d.Spec.Replicas, d.Spec.Strategy.Type)
				}
				if _, ok := r.claims["gc-groundcrew-search"]; ok {
					t.Errorf("search scales out but still claims a ReadWriteOnce volume")
				}
				if b, ok := r.budgets["gc-groundcrew-search"]; !ok || b.Spec.MaxUnavailable == nil || b.Spec.MaxUnavailable.IntValue() != 1 {
					t.Errorf("search runs 3 replicas without a PodDisruptionBudget allowing one down")
				}
				c := container(r, "search")
				if ref := secretRef(c, "SEARCH_DATABASE_URL"); ref == nil || ref.Name != "groundcrew-postgres" || ref.Key != "SEARCH_DATABASE_URL" {
					t.Errorf("search SEARCH_DATABASE_URL secret ref = %+v", ref)
				}
				if ref := secretRef(c, "DATABASE_URL"); ref != nil || env(c, "DATABASE_URL") != "" {
					t.Errorf("search also gets DATABASE_URL")
				}
				// The others keep their embedded stores and one replica.
				if d := r.deployments["gc-groundcrew-notifier"]; *d.Spec.Replicas != 1 {
					t.Errorf("notifier: %d replicas, want 1", *d.Spec.Replicas)
				}
			},
		},
		{
			name: "Postgres and Qdrant scaled out",
			file: "scaled-out-values.yaml",
			want: parts,
			check: func(t *testing.T, r *rendered) {
				// The gateway checks the webhook's secret itself, from the
				// notifier's Secret, before reading a body.
				if ref := secretRef(container(r, "gateway"), "TELEGRAM_WEBHOOK_SECRET"); ref == nil || ref.Name != "groundcrew-telegram" ||
					ref.Key != "TELEGRAM_WEBHOOK_SECRET" || ref.Optional == nil || !*ref.Optional {
					t.Errorf("gateway TELEGRAM_WEBHOOK_SECRET = %+v, want optional, from the notifier's Secret groundcrew-telegram", ref)
				}
				for p, want := range map[string]int32{"grounding": 3, "rag": 3} {
					d := r.deployments["gc-groundcrew-"+p]
					if *d.Spec.Replicas != want || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
						t.Errorf("%s: %d replicas, strategy %s; want %d, RollingUpdate", p, *d.Spec.Replicas, d.Spec.Strategy.Type, want)
					}
					if _, ok := r.claims["gc-groundcrew-"+p]; ok {
						t.Errorf("%s scales out but still claims a ReadWriteOnce volume", p)
					}
				}
				for _, p := range []string{"grounding", "rag", "notifier", "gateway"} {
					if _, ok := r.budgets["gc-groundcrew-"+p]; !ok {
						t.Errorf("%s scales out without a PodDisruptionBudget", p)
					}
				}
				for _, p := range []string{"notifier", "gateway"} {
					h, ok := r.autoscalers["gc-groundcrew-"+p]
					if !ok {
						t.Errorf("%s: no HorizontalPodAutoscaler", p)
						continue
					}
					if h.Spec.ScaleTargetRef.Name != "gc-groundcrew-"+p || r.deployments["gc-groundcrew-"+p].Spec.Replicas != nil {
						t.Errorf("%s: the autoscaler targets %q, or the Deployment still fixes replicas", p, h.Spec.ScaleTargetRef.Name)
					}
				}
				if ref := secretRef(container(r, "notifier"), "DATABASE_URL"); ref == nil || ref.Name != "groundcrew-postgres" || ref.Key != "NOTIFIER_DATABASE_URL" {
					t.Errorf("notifier DATABASE_URL secret ref = %+v", ref)
				}
				if got := env(container(r, "rag"), "QDRANT_URL"); got != "http://qdrant.qdrant.svc:6334" {
					t.Errorf("rag QDRANT_URL = %q", got)
				}
				if ref := secretRef(container(r, "rag"), "QDRANT_API_KEY"); ref == nil || ref.Name != "groundcrew-qdrant" {
					t.Errorf("rag QDRANT_API_KEY secret ref = %+v", ref)
				}
				for _, p := range parts {
					c := container(r, p)
					mounted := false
					for _, m := range c.VolumeMounts {
						mounted = mounted || (m.MountPath == "/etc/groundcrew/grpc-tls" && m.ReadOnly)
					}
					var secret string
					for _, v := range r.deployments["gc-groundcrew-"+p].Spec.Template.Spec.Volumes {
						if v.Name == "grpc-tls" && v.Secret != nil {
							secret = v.Secret.SecretName
						}
					}
					if !mounted || secret != "groundcrew-grpc-tls" || env(c, "GRPC_TLS_CA") != "/etc/groundcrew/grpc-tls/ca.crt" {
						t.Errorf("%s: mTLS material not mounted read-only from groundcrew-grpc-tls (secret %q, GRPC_TLS_CA %q)", p, secret, env(c, "GRPC_TLS_CA"))
					}
				}
				if _, ok := r.claims["gc-groundcrew-search"]; !ok {
					t.Errorf("search lost its claim: without search.database its local index is embedded whatever else scales")
				}
				if len(r.serviceMonitors) != len(parts) {
					t.Errorf("%d ServiceMonitors, want one per part", len(r.serviceMonitors))
				}
				// The PrometheusRule carries deploy/prometheus/groundcrew.rules.yml
				// (through the chart's files/ link), alerts and all.
				rs, ok := r.ruleSets["gc-groundcrew"]
				if !ok {
					t.Fatalf("no PrometheusRule")
				}
				rulesText, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "prometheus", "groundcrew.rules.yml"))
				if err != nil {
					t.Fatal(err)
				}
				alerts := 0
				for _, g := range rs.Spec.Groups {
					for _, rule := range g.Rules {
						if rule.Alert == "" {
							continue
						}
						alerts++
						if rule.Annotations["runbook_url"] == "" || !strings.Contains(string(rulesText), "alert: "+rule.Alert+"\n") {
							t.Errorf("PrometheusRule alert %s: no runbook_url, or not in groundcrew.rules.yml", rule.Alert)
						}
					}
				}
				if want := strings.Count(string(rulesText), "- alert: "); alerts != want || want == 0 {
					t.Errorf("PrometheusRule has %d alerts, groundcrew.rules.yml %d", alerts, want)
				}
				// Each service accepts gRPC from its callers only.
				callers := map[string][]string{
					"search": {"grounding", "gateway"}, "grounding": {"notifier", "gateway"},
					"rag": {"grounding", "gateway"}, "notifier": {"grounding", "gateway"},
				}
				for p, want := range callers {
					np, ok := r.policies["gc-groundcrew-"+p]
					if !ok {
						t.Errorf("%s: no NetworkPolicy", p)
						continue
					}
					var got []string
					for _, rule := range np.Spec.Ingress {
						if len(rule.Ports) == 1 && rule.Ports[0].Port.String() == "grpc" {
							for _, from := range rule.From {
								got = append(got, from.PodSelector.MatchLabels["app.kubernetes.io/component"])
							}
						}
					}
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Errorf("%s: gRPC open to %v, want its callers %v", p, got, want)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			manifest, err := render(values(t, tt.file, tt.set...))
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			r := decode(t, manifest)
			var got []string
			for _, p := range parts {
				if _, ok := r.deployments["gc-groundcrew-"+p]; ok {
					got = append(got, p)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("rendered Deployments %v, want %v", got, tt.want)
			}
			if len(r.services) != len(tt.want) {
				t.Errorf("%d Services for %d Deployments", len(r.services), len(tt.want))
			}
			for _, p := range tt.want {
				checkWorkload(t, r, p)
			}
			tt.check(t, r)
		})
	}
}

// checkWorkload holds for every Deployment whatever the values: probes on
// the admin port, requests and limits, non-root with a read-only root, no
// capabilities and RuntimeDefault seccomp, no API token, a grace period
// longer than GRACE_PERIOD plus the preStop drain, secrets only by
// reference, and a Service that selects it.
func checkWorkload(t *testing.T, r *rendered, part string) {
	t.Helper()
	name := "gc-groundcrew-" + part
	d := r.deployments[name]
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers", part, len(pod.Containers))
	}
	c := &pod.Containers[0]
	ports := map[string]bool{}
	for _, p := range c.Ports {
		ports[p.Name] = true
	}
	for kind, probe := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Port.String() != "admin" || !ports["admin"] {
			t.Errorf("%s: %s probe %+v is not an HTTP check on the admin port", part, kind, probe)
		}
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("%s: liveness on %s, want /healthz", part, c.LivenessProbe.HTTPGet.Path)
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[res]; !ok {
			t.Errorf("%s: no %s request", part, res)
		}
		if _, ok := c.Resources.Limits[res]; !ok {
			t.Errorf("%s: no %s limit", part, res)
		}
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod security context %+v: want runAsNonRoot and RuntimeDefault seccomp", part, psc)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") ||
		sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("%s: container security context %+v: want non-root, read-only root, no privilege escalation, ALL capabilities dropped", part, sc)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: the service account token is mounted", part)
	}
	if sa, ok := r.accounts[pod.ServiceAccountName]; !ok || sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("%s: service account %q not rendered, or it automounts its token", part, pod.ServiceAccountName)
	}
	grace, err := time.ParseDuration(env(c, "GRACE_PERIOD"))
	if err != nil {
		t.Errorf("%s: GRACE_PERIOD: %v", part, err)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Errorf("%s: no preStop drain", part)
	} else if pod.TerminationGracePeriodSeconds == nil ||
		time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= grace+time.Duration(c.Lifecycle.PreStop.Sleep.Seconds)*time.Second {
		t.Errorf("%s: terminationGracePeriodSeconds %v is not above GRACE_PERIOD %s plus the %ds preStop", part,
			pod.TerminationGracePeriodSeconds, grace, c.Lifecycle.PreStop.Sleep.Seconds)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if env(c, "DATA_DIR") != "/data" || mounts["/data"] == "" || mounts["/tmp"] == "" {
		t.Errorf("%s: DATA_DIR=%q, mounts %v: the read-only root needs /data and /tmp mounted", part, env(c, "DATA_DIR"), mounts)
	}
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			if _, ok := r.claims[v.PersistentVolumeClaim.ClaimName]; !ok {
				t.Errorf("%s: volume %s claims %q, which is not rendered", part, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
	for _, e := range c.Env {
		if secretName(e.Name) && e.ValueFrom == nil {
			t.Errorf("%s: %s is a secret but set in plain text", part, e.Name)
		}
	}
	svc, ok := r.services[name]
	if !ok {
		t.Fatalf("%s: no Service", part)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v || d.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("%s: Service selects %s=%s, which its pods do not carry", part, k, v)
		}
	}
	for _, p := range svc.Spec.Ports {
		if !ports[p.TargetPort.String()] {
			t.Errorf("%s: Service port %s targets %q, not a container port", part, p.Name, p.TargetPort.String())
		}
	}
}

// secretName tells the variables that carry credentials.
func secretName(name string) bool {
	return name == "DATABASE_URL" || name == "GATEWAY_API_KEYS" || name == "GRPC_SHARED_TOKEN" ||
		name == "TELEGRAM_BOT_TOKEN" || name == "TELEGRAM_WEBHOOK_SECRET" || strings.HasSuffix(name, "_API_KEY")
}

func container(r *rendered, part string) *corev1.Container {
	d, ok := r.deployments["gc-groundcrew-"+part]
	if !ok {
		panic(fmt.Sprintf("no Deployment for %s", part))
	}
	return &d.Spec.Template.Spec.Containers[0]
}

// env is the plain value of a container's variable ("" when unset or
// read from a Secret).
func env(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func secretRef(c *corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

func TestChartRefusesWhatCannotWork(t *testing.T) {
	tests := []struct {
		set  []string
		want []string // all in the error message
	}{
		{[]string{"search.replicas=2"}, []string{"search.replicas=2", "local search index", "one replica", "search.database.existingSecret"}},
		{[]string{"search.autoscaling.enabled=true"}, []string{"search.autoscaling.enabled=true", "search.database.existingSecret"}},
		{[]string{"search.env.SEARCH_DATABASE_URL=postgres://u:p@db/x"}, []string{"search.env.SEARCH_DATABASE_URL", "existingSecret"}},
		{[]string{"notifier.replicas=2"}, []string{"notifier.replicas=2", "SQLite", "notifier.database.existingSecret"}},
		{[]string{"grounding.autoscaling.enabled=true"}, []string{"grounding.autoscaling.enabled=true", "grounding.database.existingSecret"}},
		{[]string{"rag.replicas=3"}, []string{"rag.replicas=3", "embedded vector index", "rag.qdrant.url"}},
		{[]string{"gateway.apiKeys.existingSecret="}, []string{"GATEWAY_API_KEYS", "existing Secret"}},
		{[]string{"notifier.env.DATABASE_URL=postgres://u:p@db/x"}, []string{"notifier.env.DATABASE_URL", "existingSecret"}},
		// values.schema.json: a misspelt key or a wrong type is refused,
		// not silently ignored.
		{[]string{"notifer.enabled=false"}, []string{"notifer", "not allowed"}},
		{[]string{"notifier.replicas=two"}, []string{"/notifier/replicas", "want integer"}},
		{[]string{"gateway.readinessPath=/ready"}, []string{"/gateway/readinessPath"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.set, ","), func(t *testing.T) {
			manifest, err := render(values(t, "", tt.set...))
			if err == nil {
				t.Fatalf("rendered, want a failure naming %q; got %d bytes", tt.want, len(manifest))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestChartHelpers checks the local helpers on a known Deployment, so the
// assertions above cannot pass vacuously.
func TestChartHelpers(t *testing.T) {
	manifest, err := render(values(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count([]byte(manifest), []byte("\nkind: Deployment")); n != len(parts) {
		t.Fatalf("%d Deployments in the manifest text, want %d", n, len(parts))
	}
	r := decode(t, manifest)
	c := container(r, "search")
	if got, want := env(c, "SEARCH_LISTEN_ADDR"), ":"+strconv.Itoa(50051); got != want {
		t.Errorf("SEARCH_LISTEN_ADDR = %q, want %q", got, want)
	}
	if env(c, "GRPC_SHARED_TOKEN") != "" || secretRef(c, "GRPC_SHARED_TOKEN") == nil {
		t.Errorf("env/secretRef do not tell a Secret reference from a value")
	}
}
