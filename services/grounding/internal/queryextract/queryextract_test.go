package queryextract

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestDerive pins the query for realistic alerts. The expectations are what
// an on-call engineer would type into a search box for each alert: the
// alert or error name, the key error phrase, the product, the top frame of
// a stack trace — and no ids, hosts, numbers or timestamps.
func TestDerive(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
	}{
		{
			name: "alertmanager crash looping pod",
			text: `[FIRING:1] KubePodCrashLooping (prod payments-api-7d9f8b6c5-x2x9z default) Pod default/payments-api-7d9f8b6c5-x2x9z is restarting 5.2 times / 10 minutes`,
			want: "KubePodCrashLooping payments-api pod restarting",
		},
		{
			name: "grafana legacy cpu",
			text: `[Alerting] High CPU usage alert: cpu_usage_idle < 10 on host=web-03.internal`,
			want: "high CPU usage cpu_usage_idle",
		},
		{
			name: "plain error rate",
			text: `High error rate on checkout-api: 5xx > 10% for 5m`,
			want: "high error rate checkout-api 5xx",
		},
		{
			name: "alertmanager oomkilled with exit code",
			text: `[FIRING:1] KubeContainerOOMKilled (prod orders-worker-5f6d7c8b9-abcde orders) Container orders-worker in pod orders/orders-worker-5f6d7c8b9-abcde was OOMKilled (exit code 137)`,
			want: "KubeContainerOOMKilled orders-worker container pod OOMKilled exit code 137",
		},
		{
			name: "alertmanager postgres connections",
			text: `[FIRING:2] PostgresqlTooManyConnections (postgres-primary-0 10.2.3.4:9187 critical) PostgreSQL instance has too many connections (> 80%). VALUE = 92`,
			want: "PostgresqlTooManyConnections postgres postgres-primary too many connections",
		},
		{
			name: "kafka consumer lag",
			text: `Kafka consumer group billing-consumers lag is 152340 messages on topic invoices (threshold 10000)`,
			want: "kafka consumer group billing-consumers lag messages topic invoices",
		},
		{
			name: "java npe",
			text: `Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "<local1>" is null
	at com.acme.checkout.OrderService.validate(OrderService.java:42)
	at com.acme.checkout.OrderService.process(OrderService.java:17)
	at com.acme.checkout.Main.main(Main.java:9)`,
			want: "java NullPointerException cannot invoke String.length() null OrderService.validate",
		},
		{
			name: "go nil pointer panic",
			text: `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x6a2b3c]

goroutine 42 [running]:
main.(*Server).handleOrder(0xc000123456, {0x7f8a9c, 0xc0001a2b3c})
	/app/server.go:87 +0x1c
net/http.HandlerFunc.ServeHTTP(0xc0000a6000, {0x8d4f20, 0xc0001c2000}, 0xc0001b6000)
	/usr/local/go/src/net/http/server.go:2136 +0x29`,
			want: "golang panic runtime error invalid memory address nil pointer dereference main.(*Server).handleOrder",
		},
		{
			name: "python requests traceback",
			text: `Traceback (most recent call last):
  File "/app/worker.py", line 88, in process_job
    result = client.fetch(job.id)
  File "/usr/lib/python3.11/site-packages/requests/adapters.py", line 519, in send
    raise ConnectionError(e, request=request)
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.partner.io', port=443): Max retries exceeded with url: /v1/x (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f3b2c1d0e50>: Failed to establish a new connection: [Errno 111] Connection refused'))`,
			want: "python requests.adapters.send ConnectionError max retries exceeded NewConnectionError connection refused",
		},
		{
			name: "spring boot hikari log line",
			text: `2024-03-05 14:22:10.123 ERROR 1 --- [nio-8080-exec-3] o.h.engine.jdbc.spi.SqlExceptionHelper   : HikariPool-1 - Connection is not available, request timed out after 30000ms.`,
			want: "SqlExceptionHelper HikariPool connection not available request timed out",
		},
		{
			name: "nginx upstream timeout",
			text: `2024/03/05 14:22:10 [error] 31#31: *1234 upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.0.0.1, server: api.example.com, request: "GET /v1/orders HTTP/1.1", upstream: "http://10.0.0.12:8080/v1/orders", host: "api.example.com"`,
			want: "nginx upstream timed out connection timed out reading response header",
		},
		{
			name: "node filesystem space",
			text: `[FIRING:1] NodeFilesystemAlmostOutOfSpace (/dev/sda1 ext4 node-exporter /var/lib/docker) Filesystem on /dev/sda1 at 10.0.0.7:9100 has only 3.2% available space left.`,
			want: "NodeFilesystemAlmostOutOfSpace node-exporter filesystem available space left",
		},
		{
			name: "x509 expired",
			text: `x509: certificate has expired or is not yet valid: current time 2024-03-05T14:22:10Z is after 2024-03-01T00:00:00Z`,
			want: "x509 certificate has expired not yet valid",
		},
		{
			name: "logfmt dns failure",
			text: `level=error ts=2024-03-05T14:22:10.123Z caller=store.go:88 msg="failed to acquire connection" err="dial tcp: lookup redis-master.cache.svc.cluster.local on 10.96.0.10:53: no such host"`,
			want: "failed to acquire connection dial tcp lookup redis no such host",
		},
		{
			name: "node econnrefused",
			text: `Error: connect ECONNREFUSED 127.0.0.1:6379
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)`,
			want: "nodejs connect ECONNREFUSED TCPConnectWrap.afterConnect",
		},
		{
			name: "grpc deadline",
			text: `Failed to fetch prices from pricing-svc: rpc error: code = DeadlineExceeded desc = context deadline exceeded`,
			want: "failed to fetch prices pricing-svc rpc error DeadlineExceeded context deadline exceeded",
		},
		{
			name: "alertmanager label list",
			text: `[FIRING:1] HighRequestLatency (api-gateway warning)
Labels:
 - alertname = HighRequestLatency
 - service = api-gateway
 - severity = warning
 - instance = 10.1.2.3:8080
Annotations:
 - summary = p99 latency above 2s on api-gateway
 - runbook_url = https://runbooks.example.com/latency
Source: http://prometheus:9090/graph?g0.expr=histogram_quantile`,
			want: "HighRequestLatency api-gateway p99 latency",
		},
		{
			name: "redis memory",
			text: `Redis memory usage is at 95% of maxmemory on redis-cache-2 (used_memory=15.2GB)`,
			want: "redis memory usage maxmemory redis-cache used_memory",
		},
		{
			name: "elasticsearch red",
			text: `Elasticsearch cluster health is RED: 3 unassigned shards (index logs-2024.03.05)`,
			want: "elasticsearch cluster health RED unassigned shards index",
		},
		{
			name: "kernel oom killer",
			text: `Mar  5 14:22:10 web-03 kernel: [123456.789012] Out of memory: Killed process 4242 (java) total-vm:8123456kB, anon-rss:4012345kB`,
			want: "kernel out of memory killed process java",
		},
		{
			name: "stripe 503 with url",
			text: `Stripe webhook delivery failing: POST https://api.stripe.com/v1/webhook_endpoints returned 503 Service Unavailable (request id req_8GhT2kLmN0pQ)`,
			want: "stripe webhook delivery failing api.stripe.com 503 service unavailable",
		},
		{
			name: "only ids and location",
			text: `Disk usage on db-01.prod.example.com above 90% for 15m (user: alice@example.com, trace 4bf92f3577b34da6a3ce929d0e0e4736)`,
			want: "disk usage",
		},
		{
			name: "chinese text",
			text: `订单服务 checkout-api 数据库连接失败: connection refused (postgres 10.0.0.5:5432)`,
			want: "订单服务 checkout-api 数据库连接失败 connection refused postgres",
		},
		{
			name: "grafana unified alerting",
			text: `**Firing**

Value: B=97.2
Labels:
 - alertname = Disk IO saturation
 - grafana_folder = Infra
 - instance = web-03:9100
Annotations:
 - summary = Disk I/O utilisation above 95% on nvme0n1
Source: https://grafana.example.com/alerting/grafana/abc/view
Silence: https://grafana.example.com/alerting/silence/new?alertmanager=grafana`,
			want: "Disk IO saturation utilisation",
		},
		{
			name: "systemd unit failed",
			text: `Mar 05 14:22:10 web-03 systemd[1]: nginx.service: Main process exited, code=exited, status=1/FAILURE`,
			want: "systemd nginx main process exited FAILURE",
		},
		{
			name: "java caused by root cause",
			text: `org.springframework.dao.DataAccessResourceFailureException: Unable to acquire JDBC Connection
	at org.springframework.orm.jpa.vendor.HibernateJpaDialect.convertHibernateAccessException(HibernateJpaDialect.java:277)
	at org.springframework.orm.jpa.JpaTransactionManager.doBegin(JpaTransactionManager.java:466)
Caused by: org.postgresql.util.PSQLException: FATAL: remaining connection slots are reserved for non-replication superuser connections
	at org.postgresql.core.v3.ConnectionFactoryImpl.doAuthentication(ConnectionFactoryImpl.java:693)
	at org.postgresql.core.v3.ConnectionFactoryImpl.tryConnect(ConnectionFactoryImpl.java:203)
	... 42 more`,
			want: "java PSQLException remaining connection slots are reserved superuser connections ConnectionFactoryImpl.doAuthentication",
		},
		{
			name: "kubernetes event backoff",
			text: `Warning  BackOff  3m (x12 over 8m)  kubelet  Back-off restarting failed container search-indexer in pod search-indexer-0_search(1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901)`,
			want: "BackOff kubelet back-off restarting failed container search-indexer pod",
		},
		{
			name: "node typeerror",
			text: `TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (/srv/app/src/users.js:42:17)
    at async Promise.all (index 0)
    at async handler (/srv/app/src/routes.js:10:5)`,
			want: "nodejs TypeError cannot read properties undefined reading id getUser",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Derive(tt.text)
			if got.Text != tt.want {
				t.Errorf("Derive().Text = %q, want %q (reason: %s)", got.Text, tt.want, got.Reason)
			}
			if j := strings.Join(got.Terms, " "); j != got.Text {
				t.Errorf("Terms joined = %q, Text = %q", j, got.Text)
			}
			if n := len(got.Terms); n > DefaultMaxTerms {
				t.Errorf("%d terms, want at most %d", n, DefaultMaxTerms)
			}
			if n := utf8.RuneCountInString(got.Text); n > DefaultMaxChars {
				t.Errorf("%d characters, want at most %d", n, DefaultMaxChars)
			}
		})
	}
}

func TestDeriveTerms(t *testing.T) {
	got := Derive("[FIRING:1] KubePodCrashLooping (prod payments-api-7d9f8b6c5-x2x9z default) Pod default/payments-api-7d9f8b6c5-x2x9z is restarting 5.2 times / 10 minutes")
	want := Query{
		Text:   "KubePodCrashLooping payments-api pod restarting",
		Terms:  []string{"KubePodCrashLooping", "payments-api", "pod", "restarting"},
		Reason: "alertmanager: 4 of 5 candidate terms; removed id 2, label 3, number 2, stop word 3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Derive() mismatch (-want +got):\n%s", diff)
	}
}

func TestDeriveWithOptions(t *testing.T) {
	const alert = "Failed to fetch prices from pricing-svc: rpc error: code = DeadlineExceeded desc = context deadline exceeded"
	tests := []struct {
		name string
		opt  Options
		want []string
	}{
		{"defaults", Options{}, []string{"failed to fetch", "prices", "pricing-svc", "rpc error", "DeadlineExceeded", "context deadline exceeded"}},
		// The most important terms survive, still in alert order.
		{"three terms", Options{MaxTerms: 3}, []string{"rpc error", "DeadlineExceeded", "context deadline exceeded"}},
		{"forty characters", Options{MaxChars: 40}, []string{"prices", "rpc error", "DeadlineExceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DeriveWith(alert, tt.opt)
			if diff := cmp.Diff(tt.want, got.Terms); diff != "" {
				t.Errorf("DeriveWith(%+v).Terms mismatch (-want +got):\n%s", tt.opt, diff)
			}
		})
	}
}

func TestDeriveNothingSearchable(t *testing.T) {
	for _, text := range []string{"", "   \n\t", "10.0.0.1 4bf92f3577b34da6a3ce929d0e0e4736 2024-03-05T14:22:10Z", "!!! ??? ..."} {
		got := Derive(text)
		if got.Text != "" || len(got.Terms) != 0 {
			t.Errorf("Derive(%q) = %q, want empty", text, got.Text)
		}
		if !strings.HasSuffix(got.Reason, "nothing searchable") {
			t.Errorf("Derive(%q).Reason = %q, want it to say nothing was searchable", text, got.Reason)
		}
	}
}

func FuzzDerive(f *testing.F) {
	for _, s := range []string{
		"[FIRING:1] KubePodCrashLooping (prod payments-api-7d9f8b6c5-x2x9z default)",
		"panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:5 +0x1d",
		"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'x'",
		"level=error msg=\"x\" err=\"dial tcp: i/o timeout\"",
		"İSTANBUL-1 ünïcödé—データベース\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Derive(text)
		if len(got.Terms) > DefaultMaxTerms || utf8.RuneCountInString(got.Text) > DefaultMaxChars {
			t.Fatalf("Derive(%q) = %q exceeds the limits", text, got.Text)
		}
		if strings.Join(got.Terms, " ") != got.Text {
			t.Fatalf("Derive(%q): Text %q is not the joined Terms %q", text, got.Text, got.Terms)
		}
		if again := Derive(text); !cmp.Equal(got, again) {
			t.Fatalf("Derive(%q) not deterministic: %+v then %+v", text, got, again)
		}
	})
}

func BenchmarkDerive(b *testing.B) {
	alerts := []string{
		"[FIRING:1] KubePodCrashLooping (prod payments-api-7d9f8b6c5-x2x9z default) Pod default/payments-api-7d9f8b6c5-x2x9z is restarting 5.2 times / 10 minutes",
		"2024/03/05 14:22:10 [error] 31#31: *1234 upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.0.0.1, server: api.example.com",
		"Exception in thread \"main\" java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"<local1>\" is null\n\tat com.acme.checkout.OrderService.validate(OrderService.java:42)",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Derive(alerts[i%len(alerts)])
	}
}
