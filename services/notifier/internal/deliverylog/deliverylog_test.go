package deliverylog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

func TestDeliverLogsThePlainMessage(t *testing.T) {
	var buf bytes.Buffer
	d := &Deliverer{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}
	rec, err := d.Deliver(context.Background(), &alert.Alert{ID: "a1", Message: &alert.Message{Text: `v2\.1`, Plain: "v2.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Destination != "log" || len(rec.MessageIDs) != 1 || rec.MessageIDs[0] != "log:a1" {
		t.Errorf("receipt %+v", rec)
	}
	if !strings.Contains(buf.String(), `"message":"v2.1"`) || !strings.Contains(buf.String(), `"alert_id":"a1"`) {
		t.Errorf("log line %s", buf.String())
	}
}
