package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
)

// slowRag streams an answer one word at a time, gap apart, like a model.
type slowRag struct {
	ragv1.UnimplementedRagServiceServer
	words int
	gap   time.Duration
}

func (s slowRag) AskStream(req *ragv1.AskStreamRequest, stream grpc.ServerStreamingServer[ragv1.AskStreamResponse]) error {
	tick := time.NewTicker(s.gap)
	defer tick.Stop()
	for range s.words {
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-tick.C:
		}
		if err := stream.Send(&ragv1.AskStreamResponse{Event: &ragv1.AskStreamResponse_Delta{Delta: "word "}}); err != nil {
			return err
		}
	}
	return stream.Send(&ragv1.AskStreamResponse{Event: &ragv1.AskStreamResponse_Response{Response: &ragv1.AgentResponse{Answer: "done", Success: true}}})
}

// TestStreamOutlivesWriteTimeout streams for well over
// GATEWAY_WRITE_TIMEOUT, with each event inside it: the stream must arrive
// whole. http.Server's WriteTimeout alone would cut it off at the timeout.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	const words = 6
	backend := startBackend(t, func(s *grpcserver.Server) {
		ragv1.RegisterRagServiceServer(s, slowRag{words: words, gap: 300 * time.Millisecond})
	})
	cfg := testConfig()
	cfg.SearchAddr, cfg.GroundingAddr, cfg.RagAddr, cfg.NotifierAddr = backend.addr, backend.addr, backend.addr, backend.addr
	cfg.WriteTimeout = time.Second // the stream takes about 1.8 s
	cfg.GracePeriod = 5 * time.Second
	cfg.Listeners = config.Listeners{API: listenLocal(t), Admin: listenLocal(t)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	})

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost,
		"http://"+cfg.Listeners.API.Addr().String()+"/v1/collections/gospec:askStream", strings.NewReader(`{"query":"q"}`))
	req.Header.Set("Accept", "text/event-stream")
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			events = append(events, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading the stream after %d events: %v", len(events), err)
	}
	if len(events) != words+1 || !strings.Contains(events[len(events)-1], `"answer":"done"`) {
		t.Fatalf("got %d events, want %d ending with the answer: %q", len(events), words+1, events)
	}
}
