// Command stackload runs the built groundcrew binaries (search, rag,
// grounding, notifier, gateway) as separate processes against local
// provider stand-ins, drives alerts through the gateway at a fixed rate,
// and checks afterwards that every accepted alert reached Telegram. It is
// behind `make soak` (the offline stack with a Telegram stand-in, 200
// alerts/s for 10 minutes) and `make faults` (Gemini, Exa, Groq and
// Telegram failing 30% of their requests, with RPC probes checking
// deadlines), whose reports are in BENCHMARKS.md.
//
//	stackload -bin ../bin -rate 200 -duration 10m
//	stackload -bin ../bin -providers all -faults 0.3 -rate 50 -duration 3m
//
// The load is open loop: requests start on schedule whether or not earlier
// ones finished, so a slow server shows as latency, not a lower rate. Each
// alert carries a unique token, so none is deduplicated away and each can
// be found in what Telegram received. The report gives accept latency,
// delivery counts, repeats, enrichment outcomes, the drain time, every
// service's RSS over the run, and the injected faults.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/groundcrew/groundcrew/e2e/faultinject"
	"github.com/groundcrew/groundcrew/e2e/providerfake"
	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

type options struct {
	bin, runbooks, dataDir, databaseURL, providers, logLevel string
	rate                                                     int
	duration, drain, faultDelay, sample                      time.Duration
	faults                                                   float64
	workers                                                  int
	probes                                                   bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin", "directory holding the built binaries (make build)")
	flag.StringVar(&o.runbooks, "runbooks", "examples/runbooks", "documents for the local index and the provider stand-ins")
	flag.StringVar(&o.dataDir, "data", "", "data directory (default: a new temporary one, removed afterwards)")
	flag.StringVar(&o.databaseURL, "database-url", "", "DATABASE_URL for grounding and notifier (default: SQLite)")
	flag.StringVar(&o.providers, "providers", "telegram", `stand-ins to configure: "telegram" (the offline stack otherwise) or "all" (Gemini, Exa, Groq, Telegram)`)
	flag.StringVar(&o.logLevel, "log-level", "warn", "the services' LOG_LEVEL")
	flag.IntVar(&o.rate, "rate", 200, "alerts per second")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long to send alerts")
	flag.DurationVar(&o.drain, "drain", 30*time.Minute, "how long to wait for the backlog after the load")
	flag.Float64Var(&o.faults, "faults", 0, "share of provider requests that fail (500s, 429s, slow, dropped)")
	flag.DurationVar(&o.faultDelay, "fault-delay", 5*time.Second, "how long a slow provider answer takes")
	flag.DurationVar(&o.sample, "sample", 30*time.Second, "how often to sample memory")
	flag.IntVar(&o.workers, "workers", 0, "NOTIFIER_WORKERS (0: the service's default)")
	flag.BoolVar(&o.probes, "probes", true, "with -providers all: call Search, DeriveQuery, Ground and Ask throughout and check their deadlines")
	flag.Parse()
	if o.rate < 1 || o.duration <= 0 || (o.providers != "telegram" && o.providers != "all") || o.faults < 0 || o.faults > 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stackload:", err)
		os.Exit(1)
	}
}

// service is one running binary.
type service struct {
	name, addr, admin string
	cmd               *exec.Cmd
	exited            chan error
	logPath           string
}

func run(ctx context.Context, o options, out io.Writer) error {
	web, err := providerfake.LoadWeb(o.runbooks)
	if err != nil {
		return err
	}
	if o.dataDir == "" {
		dir, err := os.MkdirTemp("", "stackload-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.dataDir = dir
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	// Provider stand-ins, each behind a fault injector.
	tokens := &deliveries{seen: map[string]int{}}
	tg := telegramtest.NewServer(func(func()) {})
	defer tg.Close()
	tg.Handle(func(m telegramtest.Sent) telegramtest.Reply {
		tokens.record(m.Text)
		return telegramtest.Reply{}
	})
	injectors := map[string]*faultinject.Injector{}
	serve := func(name string, h http.Handler, body func(int, time.Duration) (string, []byte), seed uint64) string {
		inj := faultinject.New(h, faultinject.Config{Rate: o.faults, Seed: seed, Delay: o.faultDelay, RetryAfter: time.Second, Body: body})
		injectors[name] = inj
		srv := httptest.NewServer(inj)
		// Closed at exit; its handlers may still be mid-answer then.
		return srv.URL
	}
	env := map[string]string{
		"LOG_LEVEL": o.logLevel, "LOG_FORMAT": "json", "GATEWAY_RATE_LIMIT": "0",
		"TELEGRAM_BOT_TOKEN": "7100000001:AAE-stackload", "TELEGRAM_WEBHOOK_SECRET": "stackload-secret", "TELEGRAM_CHAT_ID": "-100123", "TELEGRAM_BOT_USERNAME": "groundcrew_bot",
		"TELEGRAM_API_URL": serve("telegram", tg.Handler(), providerfake.TelegramErrorBody, 4),
		// The stand-in has no rate limits; Telegram's would cap one chat
		// at one message a second.
		"NOTIFIER_TELEGRAM_RATE_PER_CHAT": "100000", "NOTIFIER_TELEGRAM_RATE_OVERALL": "100000",
		// Every alert's own message is looked for at Telegram: no storm
		// digests.
		"NOTIFIER_DIGEST_THRESHOLD": "0",
	}
	if o.workers > 0 {
		env["NOTIFIER_WORKERS"] = strconv.Itoa(o.workers)
	}
	if o.databaseURL != "" {
		env["DATABASE_URL"] = o.databaseURL
	}
	var gemini *providerfake.Gemini
	if o.providers == "all" {
		gemini = &providerfake.Gemini{Web: web, APIKey: "gemini-key"}
		env["GEMINI_API_KEY"], env["GEMINI_MODEL"] = "gemini-key", "gemini-stackload"
		env["GOOGLE_GEMINI_BASE_URL"] = serve("gemini", gemini, providerfake.GeminiErrorBody, 1)
		env["EXA_API_KEY"] = "exa-key"
		env["EXA_BASE_URL"] = serve("exa", &providerfake.Exa{Web: web, APIKey: "exa-key"}, providerfake.ExaErrorBody, 2)
		env["GROQ_API_KEY"] = "groq-key"
		env["GROQ_BASE_URL"] = serve("groq", &providerfake.Groq{APIKey: "groq-key"}, providerfake.GroqErrorBody, 3) + "/openai/v1"
	}

	// Addresses: ports picked by the kernel, then handed to the services
	// (a harness, not a test: the moment between is acceptable here).
	names := []string{"search", "rag", "grounding", "notifier", "gateway"}
	svcs := map[string]*service{}
	for _, n := range names {
		addr, err := freePort()
		if err != nil {
			return err
		}
		admin, err := freePort()
		if err != nil {
			return err
		}
		svcs[n] = &service{name: n, addr: addr, admin: admin}
	}
	env["SEARCH_ADDR"], env["RAG_ADDR"] = svcs["search"].addr, svcs["rag"].addr
	env["GROUNDING_ADDR"], env["NOTIFIER_ADDR"] = svcs["grounding"].addr, svcs["notifier"].addr
	env["GATEWAY_ADDR"] = svcs["gateway"].addr
	for _, n := range names {
		s := svcs[n]
		e := maps.Clone(env)
		e["DATA_DIR"] = filepath.Join(o.dataDir, n)
		e[strings.ToUpper(n)+"_ADMIN_ADDR"] = s.admin
		if err := s.start(filepath.Join(o.bin, n), e, o.dataDir); err != nil {
			return err
		}
		defer s.stop()
	}
	gateway := "http://" + svcs["gateway"].addr
	if err := waitReady(ctx, gateway+"/readyz", svcs, 60*time.Second); err != nil {
		return err
	}
	logf("stack ready (data in %s); indexing %s", o.dataDir, o.runbooks)
	if b, err := exec.CommandContext(ctx, filepath.Join(o.bin, "search-index"), "-addr", svcs["search"].addr, o.runbooks).CombinedOutput(); err != nil {
		return fmt.Errorf("indexing the runbooks: %v\n%s", err, b)
	}
	if o.providers == "all" {
		if err := ingest(ctx, gateway, web); err != nil {
			return err
		}
	}

	// Memory, sampled throughout.
	mem := &memory{}
	mem.sample(svcs, "start")
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go func() {
		t := time.NewTicker(o.sample)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				mem.sample(svcs, "")
			}
		}
	}()

	var pr *probes
	pctx, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	if o.providers == "all" && o.probes {
		pr, err = startProbes(pctx, svcs)
		if err != nil {
			return err
		}
	}

	logf("sending %d alerts/s for %s", o.rate, o.duration)
	ld := sendAlerts(ctx, gateway, o.rate, o.duration, logf)
	mem.sample(svcs, "load end")
	stopProbes()
	logf("load done: %d accepted, %d refused, %d errors; draining", len(ld.ids), ld.refused(), ld.errors)

	drainStart := time.Now()
	if err := waitDrained(ctx, "http://"+svcs["notifier"].admin+"/metrics", o.drain, logf); err != nil {
		logf("%v", err)
	}
	drained := time.Since(drainStart)
	mem.sample(svcs, "drained")
	stopSampling()

	st := checkAlerts(ctx, gateway, ld.ids, tokens)
	report(out, o, ld, st, tokens, drained, mem, injectors, pr, gemini)
	for _, s := range svcs {
		select {
		case err := <-s.exited:
			return fmt.Errorf("%s exited during the run: %v (log: %s)", s.name, err, s.logPath)
		default:
		}
	}
	if st.lost() > 0 {
		return fmt.Errorf("%d accepted alerts did not reach Telegram", st.lost())
	}
	return nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (s *service) start(bin string, env map[string]string, dataDir string) error {
	s.cmd = exec.Command(bin)
	dieWithParent(s.cmd)
	s.cmd.Env = os.Environ()
	for k, v := range env {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	s.logPath = filepath.Join(dataDir, s.name+".log")
	f, err := os.Create(s.logPath)
	if err != nil {
		return err
	}
	s.cmd.Stdout, s.cmd.Stderr = f, f
	if err := s.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting %s: %w (run make build first)", bin, err)
	}
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait(); f.Close() }()
	return nil
}

func (s *service) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func waitReady(ctx context.Context, url string, svcs map[string]*service, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		for _, s := range svcs {
			select {
			case err := <-s.exited:
				return fmt.Errorf("%s exited during start-up: %v (log: %s)", s.name, err, s.logPath)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the stack was not ready after %s", within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ingest puts the runbooks into collection "runbooks" for the Ask probes.
func ingest(ctx context.Context, gateway string, web *providerfake.Web) error {
	var docs []map[string]string
	for _, d := range web.Docs() {
		docs = append(docs, map[string]string{"url": d.URL, "title": d.Title, "text": d.Text})
	}
	body, _ := json.Marshal(map[string]any{"documents": docs})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gateway+"/v1/collections/runbooks/documents", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("ingesting the runbooks: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("ingesting the runbooks: %s %s", resp.Status, b)
	}
	return nil
}

// load is what sending alerts produced.
type load struct {
	ids       map[string]string // token → alert id
	codes     map[int]int
	errors    int
	latencies []time.Duration
	sent      int
	took      time.Duration
}

func (l *load) refused() int {
	n := 0
	for c, k := range l.codes {
		if c != http.StatusOK {
			n += k
		}
	}
	return n
}

var topics = []string{
	"High error rate on checkout-api: 5xx above 10 percent for 5m",
	"Disk almost full on the database volume of db-%d",
	"Postgres refuses connections on db-%d: too many clients already",
	"Kafka consumer lag growing on the orders topic, partition %d",
	"Pod payments-%d in CrashLoopBackOff after deploy",
	"TLS certificate for shop-%d expires in 3 days",
	"p99 latency above 2s on search-api shard %d",
	"DNS resolution failures from node %d",
}

func sendAlerts(ctx context.Context, gateway string, rate int, d time.Duration, logf func(string, ...any)) *load {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxIdleConns: 1024}}
	l := &load{ids: map[string]string{}, codes: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	lastLog := start
	for i := 0; i < total; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			select {
			case <-ctx.Done():
				total = i
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		if time.Since(lastLog) >= 30*time.Second {
			lastLog = time.Now()
			mu.Lock()
			logf("sent %d of %d alerts", len(l.ids), total)
			mu.Unlock()
		}
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			token := fmt.Sprintf("soak%07d", n)
			text := fmt.Sprintf(topics[n%len(topics)], n%97)
			body, _ := json.Marshal(map[string]any{"text": text + " [" + token + "]", "metadata": map[string]any{"source": "stackload"}})
			t0 := time.Now()
			resp, err := client.Post(gateway+"/v1/alerts", "application/json", bytes.NewReader(body))
			lat := time.Since(t0)
			var out struct {
				Alert struct {
					ID string `json:"id"`
				} `json:"alert"`
			}
			code := 0
			if err == nil {
				code = resp.StatusCode
				_ = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				l.errors++
				return
			}
			l.codes[code]++
			l.latencies = append(l.latencies, lat)
			if code == http.StatusOK && out.Alert.ID != "" {
				l.ids[token] = out.Alert.ID
			}
		}(i)
	}
	l.sent = total
	wg.Wait()
	l.took = time.Since(start)
	return l
}

// waitDrained waits until the notifier's job queue is empty, reading its
// jobqueue_jobs gauge.
func waitDrained(ctx context.Context, metricsURL string, within time.Duration, logf func(string, ...any)) error {
	deadline := time.Now().Add(within)
	lastLog := time.Now()
	for {
		n, err := queued(metricsURL)
		if err == nil && n == 0 {
			return nil
		}
		if time.Since(lastLog) >= 30*time.Second {
			lastLog = time.Now()
			logf("draining: %d jobs queued", n)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("backlog not drained after %s (%d jobs, %v)", within, n, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// queued sums the notifier's jobqueue_jobs gauges (every state of every
// queue) from its /metrics.
func queued(metricsURL string) (int, error) {
	resp, err := http.Get(metricsURL)
	if err != nil {
		return -1, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return -1, fmt.Errorf("reading the notifier's /metrics: %w", err)
	}
	jobs, ok := families["jobqueue_jobs"]
	if !ok {
		return -1, errors.New("no jobqueue_jobs series on the notifier's /metrics")
	}
	total := 0.0
	for _, m := range jobs.GetMetric() {
		total += m.GetGauge().GetValue()
	}
	return int(total), nil
}

// deliveries counts, per alert token, the messages Telegram accepted.
type deliveries struct {
	mu       sync.Mutex
	seen     map[string]int
	enriched int
	noted    int
	messages int
}

var tokenRE = regexp.MustCompile(`soak[0-9]{7}`)

func (d *deliveries) record(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.messages++
	if t := tokenRE.FindString(text); t != "" {
		d.seen[t]++
		if d.seen[t] > 1 {
			return
		}
	}
	switch {
	case strings.Contains(text, "Enriched Context"):
		d.enriched++
	case strings.Contains(text, "Enrichment unavailable"):
		d.noted++
	}
}

// statuses is where the accepted alerts ended up.
type statuses struct {
	byStatus  map[string]int
	delivered map[string]bool // token → DELIVERED
	tokens    *deliveries
	checked   int
}

func (s statuses) lost() int {
	n := 0
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	for t := range s.delivered {
		if s.tokens.seen[t] == 0 {
			n++
		}
	}
	return n
}

func checkAlerts(ctx context.Context, gateway string, ids map[string]string, tok *deliveries) statuses {
	st := statuses{byStatus: map[string]int{}, delivered: map[string]bool{}, tokens: tok}
	type job struct{ token, id string }
	jobs := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for range 16 {
		wg.Go(func() {
			for j := range jobs {
				var out struct {
					Alert struct {
						Status string `json:"status"`
					} `json:"alert"`
				}
				status := "UNREADABLE"
				if resp, err := client.Get(gateway + "/v1/alerts/" + j.id); err == nil {
					if json.NewDecoder(resp.Body).Decode(&out) == nil && out.Alert.Status != "" {
						status = out.Alert.Status
					}
					resp.Body.Close()
				}
				mu.Lock()
				st.byStatus[status]++
				st.delivered[j.token] = true
				st.checked++
				mu.Unlock()
			}
		})
	}
	for token, id := range ids {
		if ctx.Err() != nil {
			break
		}
		jobs <- job{token, id}
	}
	close(jobs)
	wg.Wait()
	return st
}

// memory holds RSS samples of every service.
type memory struct {
	mu      sync.Mutex
	samples []memSample
}

type memSample struct {
	at    time.Time
	label string
	rss   map[string]int // KiB
}

func (m *memory) sample(svcs map[string]*service, label string) {
	s := memSample{at: time.Now(), label: label, rss: map[string]int{}}
	for n, svc := range svcs {
		s.rss[n] = rssKiB(svc.cmd.Process.Pid)
	}
	m.mu.Lock()
	m.samples = append(m.samples, s)
	m.mu.Unlock()
}

func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return -1
}

// probes call the services' RPCs under faults and record how they ended.
type probes struct {
	mu       sync.Mutex
	outcomes map[string]map[codes.Code]int
	slowest  map[string]time.Duration
	lat      map[string][]time.Duration
	wg       sync.WaitGroup
	conns    []*grpc.ClientConn
}

// probeDeadline is the callers' deadline; the services' own budgets
// (engine, round, query and Groq timeouts) are well inside it.
const probeDeadline = 30 * time.Second

func startProbes(ctx context.Context, svcs map[string]*service) (*probes, error) {
	p := &probes{outcomes: map[string]map[codes.Code]int{}, slowest: map[string]time.Duration{}, lat: map[string][]time.Duration{}}
	dial := func(addr string) (*grpc.ClientConn, error) {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err == nil {
			p.conns = append(p.conns, c)
		}
		return c, err
	}
	sc, err := dial(svcs["search"].addr)
	if err != nil {
		return nil, err
	}
	gc, err := dial(svcs["grounding"].addr)
	if err != nil {
		return nil, err
	}
	rc, err := dial(svcs["rag"].addr)
	if err != nil {
		return nil, err
	}
	search, ground, rag := searchv1.NewSearchServiceClient(sc), groundingv1.NewGroundingServiceClient(gc), ragv1.NewRagServiceClient(rc)
	questions := []string{"disk almost full on the database volume", "postgres too many clients", "checkout api 5xx after deploy", "kafka consumer lag growing", "tls certificate expires"}
	calls := map[string]func(context.Context, string) error{
		"Search(exa)": func(ctx context.Context, q string) error {
			_, err := search.Search(ctx, &searchv1.SearchRequest{Query: q, MaxResults: proto.Int32(3), Engine: searchv1.Engine_EXA})
			return err
		},
		"DeriveQuery": func(ctx context.Context, q string) error {
			_, err := ground.DeriveQuery(ctx, &groundingv1.DeriveQueryRequest{Text: q})
			return err
		},
		"Ground(exa)": func(ctx context.Context, q string) error {
			_, err := ground.Ground(ctx, &groundingv1.GroundRequest{Text: q, RoundConfig: &groundingv1.RoundConfig{Engine: groundingv1.RoundConfig_EXA}})
			return err
		},
		"Ask(groq)": func(ctx context.Context, q string) error {
			_, err := rag.Ask(ctx, &ragv1.AskRequest{Collection: "runbooks", Query: q})
			return err
		},
	}
	for name, call := range calls {
		p.wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeDeadline)
				t0 := time.Now()
				err := call(cctx, questions[i%len(questions)])
				took := time.Since(t0)
				cancel()
				p.mu.Lock()
				if p.outcomes[name] == nil {
					p.outcomes[name] = map[codes.Code]int{}
				}
				p.outcomes[name][status.Code(err)]++
				p.slowest[name] = max(p.slowest[name], took)
				p.lat[name] = append(p.lat[name], took)
				p.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		})
	}
	return p, nil
}

func (p *probes) wait() {
	p.wg.Wait()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

func report(w io.Writer, o options, ld *load, st statuses, tok *deliveries, drained time.Duration, mem *memory,
	injectors map[string]*faultinject.Injector, pr *probes, gemini *providerfake.Gemini,
) {
	slices.Sort(ld.latencies)
	db := "SQLite"
	if o.databaseURL != "" {
		db = "PostgreSQL"
	}
	fmt.Fprintf(w, "\n## stackload: %d alerts/s for %s, providers=%s, faults=%.0f%%, %s\n\n", o.rate, o.duration, o.providers, o.faults*100, db)
	fmt.Fprintf(w, "| measure | result |\n|---|---|\n")
	fmt.Fprintf(w, "| sent | %d in %s (%.1f/s) |\n", ld.sent, ld.took.Round(time.Second), float64(ld.sent)/ld.took.Seconds())
	fmt.Fprintf(w, "| accepted (200) | %d; refused %d; transport errors %d |\n", len(ld.ids), ld.refused(), ld.errors)
	fmt.Fprintf(w, "| accept latency | p50 %s, p90 %s, p99 %s, max %s |\n", ms(pct(ld.latencies, .5)), ms(pct(ld.latencies, .9)), ms(pct(ld.latencies, .99)), ms(pct(ld.latencies, 1)))
	tok.mu.Lock()
	dupes, reached := 0, 0
	for t := range ld.ids {
		if c := tok.seen[t]; c > 0 {
			reached++
			dupes += c - 1
		}
	}
	enriched, noted, messages := tok.enriched, tok.noted, tok.messages
	tok.mu.Unlock()
	statusText := []string{}
	for _, k := range slices.Sorted(maps.Keys(st.byStatus)) {
		statusText = append(statusText, fmt.Sprintf("%s %d", k, st.byStatus[k]))
	}
	fmt.Fprintf(w, "| final status of accepted alerts | %s |\n", strings.Join(statusText, ", "))
	fmt.Fprintf(w, "| reached Telegram | %d of %d accepted (%d lost); %d messages in all |\n", reached, len(ld.ids), len(ld.ids)-reached, messages)
	fmt.Fprintf(w, "| repeated deliveries | %d |\n", dupes)
	fmt.Fprintf(w, "| enriched / with the enrichment note | %d / %d |\n", enriched, noted)
	fmt.Fprintf(w, "| backlog drained | %s after the load stopped |\n", drained.Round(time.Second))
	fmt.Fprintf(w, "| delivery throughput | %.0f alerts/s over load + drain |\n", float64(reached)/(ld.took+drained).Seconds())

	fmt.Fprintf(w, "\nRSS (KiB):\n\n| service | start | load end | drained | max |\n|---|---|---|---|---|\n")
	mem.mu.Lock()
	for _, n := range []string{"search", "rag", "grounding", "notifier", "gateway"} {
		var start, end, drainedRSS, peak int
		for _, s := range mem.samples {
			peak = max(peak, s.rss[n])
			switch s.label {
			case "start":
				start = s.rss[n]
			case "load end":
				end = s.rss[n]
			case "drained":
				drainedRSS = s.rss[n]
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d |\n", n, start, end, drainedRSS, peak)
	}
	fmt.Fprintf(w, "\nRSS over time (KiB): ")
	for _, s := range mem.samples {
		total := 0
		for _, v := range s.rss {
			total += v
		}
		fmt.Fprintf(w, "%s %d; ", cmp.Or(s.label, s.at.Format("15:04:05")), total)
	}
	mem.mu.Unlock()
	fmt.Fprintln(w)

	if o.faults > 0 {
		fmt.Fprintf(w, "\nInjected faults:\n\n| provider | passed | faults |\n|---|---|---|\n")
		for _, n := range slices.Sorted(maps.Keys(injectors)) {
			f, passed := injectors[n].Counts()
			fmt.Fprintf(w, "| %s | %d | %v |\n", n, passed, f)
		}
	}
	if pr != nil {
		pr.wait()
		fmt.Fprintf(w, "\nRPC probes under faults (caller deadline %s):\n\n| RPC | outcomes | p50 | p99 | slowest |\n|---|---|---|---|---|\n", probeDeadline)
		for _, n := range slices.Sorted(maps.Keys(pr.outcomes)) {
			l := pr.lat[n]
			slices.Sort(l)
			fmt.Fprintf(w, "| %s | %v | %s | %s | %s |\n", n, pr.outcomes[n], ms(pct(l, .5)), ms(pct(l, .99)), ms(pr.slowest[n]))
		}
	}
	if gemini != nil {
		fmt.Fprintf(w, "\nGemini stand-in answered %d requests.\n", gemini.Calls())
	}
}
