package notifiergrpc

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

func metadataOf(t *testing.T, size int) *structpb.Struct {
	t.Helper()
	// {"blob":"…"} is 11 bytes around the value.
	md, err := structpb.NewStruct(map[string]any{"blob": strings.Repeat("x", size-11)})
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// TestMetadataOverBoundRefused: metadata over 16 KiB is a 400 naming the
// field, not a stored alert.
func TestMetadataOverBoundRefused(t *testing.T) {
	c := withPipeline(t)
	_, err := c.IngestAlert(context.Background(), &notifierv1.IngestAlertRequest{Text: "disk full", Metadata: metadataOf(t, alert.MaxMetadataBytes+1)})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("IngestAlert with %d bytes of metadata: %v, want InvalidArgument", alert.MaxMetadataBytes+1, err)
	}
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	if len(fields) != 1 || fields[0] != "metadata" {
		t.Errorf("field violations on %v, want [metadata]", fields)
	}
}

// TestListOfLargestAlertsAnswers is issue 29's reproduction: 45 alerts with
// the largest metadata allowed, listed 50 a page, answer OK within the
// default gRPC message limit; the page that stops early says so and the
// token reads on to every alert.
func TestListOfLargestAlertsAnswers(t *testing.T) {
	c, ctx := withPipeline(t), context.Background()
	const n = 45
	for range n {
		// Four-byte characters: the longest text the notifier keeps.
		req := &notifierv1.IngestAlertRequest{Text: strings.Repeat("🔥", alert.MaxTextLen+10), Metadata: metadataOf(t, alert.MaxMetadataBytes)}
		if _, err := c.IngestAlert(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	seen, pages := 0, 0
	req := &notifierv1.ListAlertsRequest{PageSize: 50}
	for {
		resp, err := c.ListAlerts(ctx, req)
		if err != nil {
			t.Fatalf("ListAlerts page %d: %v", pages+1, err)
		}
		pages++
		seen += len(resp.GetAlerts())
		if resp.GetSizeLimited() && resp.GetNextPageToken() == "" {
			t.Errorf("page %d is size limited without a next page token", pages)
		}
		if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
			break
		}
	}
	if seen != n {
		t.Errorf("listed %d alerts in %d pages, want %d", seen, pages, n)
	}
}
