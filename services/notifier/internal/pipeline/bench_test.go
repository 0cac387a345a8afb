package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// benchPipeline is a pipeline on SQLite whose workers are not started, so
// the benchmark measures intake alone: dedup lookup, alert insert and job
// insert in one transaction, and the commit.
func benchPipeline(b *testing.B) *Pipeline {
	b.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "", b.TempDir(), "notifier", discard())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	p, err := New(ctx, Deps{Store: store.New(db), Deliverer: &fakeDeliverer{}, Logger: discard()}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkIngestAlert(b *testing.B) {
	p := benchPipeline(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		a, err := alert.Generic(fmt.Sprintf("High error rate on checkout-api #%d: 5xx > 10%% for 5m", i), map[string]any{"severity": "critical"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Ingest(ctx, []alert.Alert{a}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIngestAlertParallel(b *testing.B) {
	p := benchPipeline(b)
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a, err := alert.Generic(fmt.Sprintf("High error rate on checkout-api #%d: 5xx > 10%% for 5m", n.Add(1)), nil)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := p.Ingest(ctx, []alert.Alert{a}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkIngestGroup is the intake of one Alertmanager payload of 10
// alerts into an existing group: group lock and update, dedup lookups,
// alert inserts, the notification and its job, in one transaction.
func BenchmarkIngestGroup(b *testing.B) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "", b.TempDir(), "notifier", discard())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	p, err := New(ctx, Deps{Store: store.New(db), Deliverer: &fakeGroups{}, Logger: discard()}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		gp, as := crashPayload(b, "bench", 10, alert.Firing)
		for j := range as {
			i++
			as[j].Fingerprint = fmt.Sprintf("%016d", i)
		}
		if _, err := p.IngestGroup(ctx, gp, as); err != nil {
			b.Fatal(err)
		}
	}
}
