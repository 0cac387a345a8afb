package queryextract

// The tables below are the extractor's knowledge. They are read-only after
// package initialisation.

// stopWords are dropped wherever they appear: English function words plus
// the vocabulary of alerting templates (severity names, "firing",
// "threshold", time units, environment names) that says nothing about the
// failure itself.
var stopWords = setOf(
	// English function words.
	"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
	"any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
	"between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "done",
	"during", "each", "either", "else", "every", "few", "for", "from", "further", "get",
	"gets", "got", "had", "has", "have", "having", "he", "her", "here", "him", "his",
	"how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "me",
	"might", "more", "most", "much", "must", "my", "no", "nor", "not", "now", "of", "off",
	"on", "once", "only", "onto", "or", "other", "our", "out", "over", "own", "per",
	"same", "shall", "she", "should", "so", "some", "still", "such", "than", "that",
	"the", "their", "them", "then", "there", "these", "they", "this", "those", "through",
	"thus", "to", "too", "under", "until", "upon", "us", "very", "via", "was", "we",
	"were", "what", "when", "where", "whether", "which", "while", "who", "whom", "why",
	"will", "with", "within", "without", "would", "yet", "you", "your", "may", "many",
	"new", "old", "errno", "cannot", "can't", "won't", "isn't", "don't", "doesn't", "didn't", "wasn't",
	"e.g", "i.e", "etc", "vs", "like", "since", "ago", "currently", "current",
	// Alerting template vocabulary.
	"alert", "alerts", "alerting", "alarm", "firing", "fired", "resolved", "triggered",
	"trigger", "threshold", "thresholds", "value", "values", "labels", "label",
	"annotations", "annotation", "summary", "description", "details", "detail",
	"severity", "warning", "warn", "critical", "crit", "info", "notice", "page",
	"minor", "major", "instance", "detected", "observed", "please", "check",
	"investigate", "runbook", "dashboard", "source", "url", "link", "see", "view",
	"status", "state", "message", "msg", "reported", "reports", "returned", "returns", "occurred", "exceeds",
	"exceeded", "exceeding", "reached", "greater", "less", "higher", "lower", "last",
	"past", "total", "approximately", "approx", "about", "least", "expected",
	// Time units and calendar words: durations are noise in a query.
	"ms", "millisecond", "milliseconds", "sec", "secs", "second", "seconds", "min",
	"mins", "minute", "minutes", "hour", "hours", "hr", "hrs", "day", "days", "week",
	"weeks", "month", "months", "time", "times", "window", "period", "today",
	"yesterday", "utc", "gmt", "am", "pm", "monday", "tuesday", "wednesday", "thursday",
	"friday", "saturday", "sunday", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
	// Environment names.
	"prod", "production", "prd", "staging", "stage", "stg", "dev", "development",
	"qa", "uat", "preprod", "sandbox", "default",
)

// logLevels are dropped when written in capitals, as log lines print them;
// lower-case "error" stays because "high error rate" needs it.
var logLevels = setOf("ERROR", "ERR", "WARN", "WARNING", "INFO", "DEBUG", "TRACE",
	"FATAL", "CRITICAL", "CRIT", "NOTICE", "ALERT", "EMERG", "PANIC", "SEVERE", "FINE")

// errorNames are error identifiers that search engines know well: errno
// names, signals and Kubernetes container and node reasons.
var errorNames = setOf(
	"ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ETIMEDOUT", "EHOSTUNREACH",
	"ENETUNREACH", "EADDRINUSE", "EADDRNOTAVAIL", "ENOTFOUND", "EAI_AGAIN", "ENOSPC",
	"ENOMEM", "EMFILE", "ENFILE", "EACCES", "EPERM", "ENOENT", "EPIPE", "EEXIST",
	"EROFS", "EIO", "EAGAIN", "EBUSY", "EDQUOT", "ESOCKETTIMEDOUT",
	"SIGSEGV", "SIGKILL", "SIGTERM", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGPIPE",
	"SIGHUP", "SIGINT", "SIGQUIT", "OOM", "OOMKilled", "CrashLoopBackOff",
	"ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "InvalidImageName",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
	"ContainerCannotRun", "Evicted", "NodeNotReady", "NodeLost", "FailedScheduling",
	"FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "BackOff",
	"Unhealthy", "DeadlineExceeded", "PreStopHookError", "PostStartHookError",
	"ProgressDeadlineExceeded", "Unavailable", "ResourceExhausted", "Unauthenticated",
	"PermissionDenied", "SERVFAIL", "NXDOMAIN", "REFUSED",
)

// products maps known software, platforms and services (lower case) to the
// spelling used in the query. A product name is worth more to a search
// engine than any other plain word.
var products = map[string]string{
	"postgres": "postgres", "postgresql": "postgresql", "pgbouncer": "pgbouncer",
	"patroni": "patroni", "mysql": "mysql", "mariadb": "mariadb", "redis": "redis",
	"memcached": "memcached", "kafka": "kafka", "zookeeper": "zookeeper",
	"rabbitmq": "rabbitmq", "nats": "nats", "pulsar": "pulsar", "mongodb": "mongodb",
	"mongo": "mongodb", "cassandra": "cassandra", "elasticsearch": "elasticsearch",
	"opensearch": "opensearch", "clickhouse": "clickhouse", "etcd": "etcd",
	"consul": "consul", "vault": "vault", "nginx": "nginx", "ingress-nginx": "ingress-nginx",
	"envoy": "envoy", "istio": "istio", "linkerd": "linkerd", "haproxy": "haproxy",
	"traefik": "traefik", "caddy": "caddy", "apache": "apache", "httpd": "httpd",
	"tomcat": "tomcat", "jetty": "jetty", "kubernetes": "kubernetes", "k8s": "kubernetes",
	"kubelet": "kubelet", "kube-proxy": "kube-proxy", "kube-apiserver": "kube-apiserver",
	"apiserver": "apiserver", "coredns": "coredns", "kube-dns": "kube-dns",
	"containerd": "containerd", "docker": "docker", "cri-o": "cri-o", "helm": "helm",
	"argocd": "argocd", "cert-manager": "cert-manager", "prometheus": "prometheus",
	"alertmanager": "alertmanager", "grafana": "grafana", "loki": "loki", "tempo": "tempo",
	"thanos": "thanos", "node-exporter": "node-exporter", "kube-state-metrics": "kube-state-metrics",
	"jvm": "jvm", "java": "java", "golang": "golang", "python": "python", "nodejs": "nodejs",
	"node.js": "node.js", "ruby": "ruby", "php": "php", "php-fpm": "php-fpm",
	"gunicorn": "gunicorn", "uwsgi": "uwsgi", "celery": "celery", "sidekiq": "sidekiq",
	"django": "django", "rails": "rails", "spring": "spring", "hikaricp": "hikaricp",
	"hibernate": "hibernate", "grpc": "grpc", "graphql": "graphql", "s3": "s3",
	"ec2": "ec2", "rds": "rds", "aurora": "aurora", "dynamodb": "dynamodb", "sqs": "sqs",
	"sns": "sns", "lambda": "lambda", "cloudfront": "cloudfront", "elb": "elb",
	"alb": "alb", "gcs": "gcs", "bigquery": "bigquery", "pubsub": "pubsub",
	"cloudflare": "cloudflare", "minio": "minio", "ceph": "ceph", "spark": "spark",
	"hadoop": "hadoop", "hdfs": "hdfs", "flink": "flink", "airflow": "airflow",
	"jenkins": "jenkins", "terraform": "terraform", "systemd": "systemd",
	"linux": "linux", "windows": "windows", "openssl": "openssl", "letsencrypt": "letsencrypt",
	"stripe": "stripe", "twilio": "twilio", "sendgrid": "sendgrid", "github": "github",
	"gitlab": "gitlab", "sqlite": "sqlite", "qdrant": "qdrant", "keycloak": "keycloak",
}

// canonical folds synonyms so a query does not repeat one product twice.
var canonical = map[string]string{
	"postgresql": "postgres", "pg": "postgres", "k8s": "kubernetes", "mongo": "mongodb",
	"node.js": "nodejs", "golang": "go",
}

// phrases are multi-word error messages kept together because they are what
// people search for verbatim. Longer phrases come before the phrases they
// contain so that the longest match wins.
var phrases = []string{
	"context deadline exceeded", "deadline exceeded", "connection refused",
	"connection reset by peer", "connection reset", "connection timed out",
	"connection closed", "broken pipe", "no route to host", "no such host",
	"network is unreachable", "i/o timeout", "tls handshake timeout",
	"tls handshake error", "ssl handshake failed", "certificate has expired",
	"certificate signed by unknown authority", "not yet valid", "x509",
	"no space left on device", "disk full", "read-only file system",
	"too many open files", "too many connections", "too many requests",
	"remaining connection slots are reserved", "max retries exceeded",
	"out of memory", "cannot allocate memory", "memory limit exceeded",
	"oom killer", "oom-killer", "killed process", "segmentation fault",
	"segmentation violation", "nil pointer dereference", "invalid memory address",
	"index out of range", "concurrent map writes", "stack overflow", "deadlock detected",
	"lock wait timeout exceeded", "could not serialize access", "duplicate key value",
	"permission denied", "access denied", "unauthorized", "forbidden",
	"bad gateway", "service unavailable", "gateway timeout", "internal server error",
	"no healthy upstream", "upstream connect error", "upstream timed out",
	"upstream prematurely closed connection", "timed out", "back-off restarting failed container",
	"liveness probe failed", "readiness probe failed", "startup probe failed",
	"failed to pull image", "image pull backoff", "pod has unbound immediate persistentvolumeclaims",
	"insufficient cpu", "insufficient memory", "node not ready", "disk pressure",
	"memory pressure", "pid pressure", "replication lag", "consumer lag",
	"leader election lost", "split brain", "rate limit exceeded", "rate limited",
	"quota exceeded", "dial tcp", "rpc error", "runtime error", "fatal error",
	"health check failed", "circuit breaker open", "dns resolution failed",
	"high error rate", "error rate",
}

// dropKeys are label names whose values identify where something happened
// (which pod, host, tenant, trace) rather than what happened; the value is
// useless to a search engine.
var dropKeys = setOf(
	"severity", "namespace", "pod", "pod_name", "instance", "host", "hostname", "node",
	"nodename", "node_name", "cluster", "region", "zone", "az", "env", "environment",
	"team", "owner", "prometheus", "receiver", "endpoint", "uid", "id", "trace_id",
	"traceid", "span_id", "spanid", "request_id", "requestid", "correlation_id",
	"runbook_url", "runbook", "dashboard", "dashboardurl", "dashboard_url", "panel",
	"panelurl", "panel_url", "silenceurl", "generatorurl", "generator_url", "datacenter",
	"dc", "ip", "address", "addr", "remote_addr", "client", "server", "port", "pid", "tid",
	"thread", "ts", "time", "timestamp", "caller", "level", "lvl", "replica", "version",
	"image", "device", "fstype", "mountpoint", "path", "file", "line", "user", "user_id",
	"userid", "customer", "tenant", "org", "account", "le", "quantile", "var", "ref_id",
	"refid", "grafana_folder", "rule_uid", "fingerprint", "upstream", "request",
	"referrer", "url", "uri", "host_name", "pod_ip", "container_id", "exported_instance",
	"exported_namespace", "exported_pod", "priority", "value", "values", "count",
	"service_namespace", "k8s_namespace_name", "k8s_pod_name", "project", "tags",
)

// componentKeys are label names whose values name the failing software.
var componentKeys = setOf(
	"service", "service_name", "app", "application", "app_kubernetes_io_name",
	"container", "container_name", "component", "deployment", "statefulset",
	"daemonset", "job", "job_name", "topic", "consumergroup", "consumer_group", "group",
	"queue", "database", "db", "datname", "broker", "cronjob", "workload", "k8s_deployment_name",
	"k8s_container_name",
)

// errorKeys are label names whose values are error identifiers.
var errorKeys = setOf("alertname", "reason", "code", "grpc_code", "errno", "exception", "error_type", "error_code", "signal")

// textKeys introduce free text (log messages, annotations) that is processed
// like the rest of the alert.
var textKeys = setOf("msg", "message", "desc", "description", "summary", "err", "error", "title", "text", "detail", "details", "cause")

// publicTLDs are the top-level domains we treat as public hosts worth a hint
// (an external API the service calls); anything else is an internal name.
var publicTLDs = setOf("com", "net", "org", "io", "dev", "cloud", "app", "ai", "co",
	"info", "biz", "me", "sh", "so", "us", "uk", "de", "eu", "fr", "nl", "jp", "in", "au")

// internalTLDs end host names on private networks and in clusters.
var internalTLDs = setOf("internal", "local", "lan", "corp", "svc", "home", "localdomain",
	"intranet", "private", "cluster", "localhost", "test", "example", "invalid")

// httpMethods in capitals are request-log noise.
var httpMethods = setOf("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT")

// techTokens are words mixing letters and digits that are names, not ids.
var techTokens = setOf("x509", "log4j", "log4j2", "oauth2", "http2", "http3", "h2", "h2c",
	"ipv4", "ipv6", "utf8", "utf-8", "md5", "sha1", "sha256", "base64", "s3", "ec2", "k8s",
	"gp2", "gp3", "io1", "io2", "ext4", "xfs", "arm64", "amd64", "x86_64", "i18n", "p50",
	"p75", "p90", "p95", "p99", "p999", "1xx", "2xx", "3xx", "4xx", "5xx", "2fa", "mp4",
	"tls1.2", "tls1.3", "python3", "python2", "jdk8", "jdk11", "jdk17", "jdk21", "java8",
	"java11", "java17", "java21", "v8", "l4", "l7", "3des", "aes256", "e2e", "b2b", "a2a")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
