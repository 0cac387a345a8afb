package store

import (
	"context"
	"testing"
)

func TestChatMigrations(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			if to, ok, err := s.MigratedChat(ctx, "-4001"); err != nil || ok || to != "-4001" {
				t.Fatalf("unmigrated chat: %q %v %v; want itself, false", to, ok, err)
			}
			if err := s.RecordChatMigration(ctx, "-4001", "-1004001", t0); err != nil {
				t.Fatal(err)
			}
			// Recording it again (another instance saw the same error) is
			// no error.
			if err := s.RecordChatMigration(ctx, "-4001", "-1004001", t0); err != nil {
				t.Fatal(err)
			}
			if to, ok, err := s.MigratedChat(ctx, "-4001"); err != nil || !ok || to != "-1004001" {
				t.Errorf("migrated chat: %q %v %v; want -1004001, true", to, ok, err)
			}
			if _, ok, _ := s.MigratedChat(ctx, "-1004001"); ok {
				t.Errorf("the supergroup itself reads as migrated")
			}
		})
	}
}
