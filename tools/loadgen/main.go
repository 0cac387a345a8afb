// Command loadgen posts JSON to an HTTP endpoint at a fixed rate (open loop:
// requests start on schedule whether or not earlier ones finished, so slow
// responses show up as latency instead of silently lowering the rate) and
// reports throughput and latency percentiles. Each body can differ: "{{n}}"
// in the template is replaced by the request number, so alerts are not
// deduplicated away.
//
//	loadgen -url http://127.0.0.1:8080/v1/alerts -rate 200 -duration 60s \
//	  -body '{"text":"load test alert {{n}}: disk full on db-{{n}}"}'
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "endpoint to POST to")
	rate := flag.Int("rate", 200, "requests per second")
	duration := flag.Duration("duration", 60*time.Second, "how long to send")
	body := flag.String("body", `{"text":"load test alert {{n}}"}`, "JSON body; {{n}} is the request number")
	header := flag.String("header", "", "an extra header, Name: value")
	flag.Parse()
	if *url == "" || *rate < 1 {
		fmt.Fprintln(os.Stderr, "usage: loadgen -url URL [-rate N] [-duration D] [-body JSON]")
		os.Exit(2)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		codes     = map[int]int{}
		errs      int
		wg        sync.WaitGroup
	)
	interval := time.Second / time.Duration(*rate)
	start := time.Now()
	total := int(duration.Seconds() * float64(*rate))
	for i := range total {
		// Open loop: wait for this request's slot, then fire it.
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, *url, strings.NewReader(strings.ReplaceAll(*body, "{{n}}", strconv.Itoa(n))))
			req.Header.Set("Content-Type", "application/json")
			if k, v, ok := strings.Cut(*header, ":"); ok {
				req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			t0 := time.Now()
			resp, err := client.Do(req)
			lat := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[resp.StatusCode]++
			latencies = append(latencies, lat)
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "requests %d in %s (%.1f/s); errors %d; status %v\n", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), errs, codes)
	fmt.Fprintf(&b, "latency p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	os.Stdout.Write(b.Bytes())
}
