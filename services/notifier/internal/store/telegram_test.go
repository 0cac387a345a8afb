package store

import (
	"context"
	"testing"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
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

// TestChatMigrationMovesGroups: the groups of a migrated chat belong to
// the new chat from then on, unless one of the same key is there already.
func TestChatMigrationMovesGroups(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, ctx := open(t), context.Background()
			moved, kept, there := newGroup("g-moved", "k1"), newGroup("g-kept", "k2"), newGroup("g-there", "k2")
			moved.Destination, kept.Destination, there.Destination = "-4001", "-4001", "-1004001"
			for _, g := range []*alert.Group{moved, kept, there} {
				if err := s.InsertGroup(ctx, s.DB(), g); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.RecordChatMigration(ctx, "-4001", "-1004001", t0); err != nil {
				t.Fatal(err)
			}
			for id, want := range map[string]string{"g-moved": "-1004001", "g-kept": "-4001", "g-there": "-1004001"} {
				g, err := s.GetGroup(ctx, nil, id)
				if err != nil {
					t.Fatal(err)
				}
				if g.Destination != want {
					t.Errorf("group %s in chat %s, want %s", id, g.Destination, want)
				}
			}
		})
	}
}
