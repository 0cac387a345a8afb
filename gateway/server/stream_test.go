package server

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
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
	cfg := testConfig()
	cfg.WriteTimeout = time.Second // the stream takes about 1.8 s
	rest, _ := runGatewayWith(t, cfg, func(s *grpcserver.Server) {
		ragv1.RegisterRagServiceServer(s, slowRag{words: words, gap: 300 * time.Millisecond})
	})

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost,
		"http://"+rest+"/v1/collections/gospec:askStream", strings.NewReader(`{"query":"q"}`))
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
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
