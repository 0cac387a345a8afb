package notifiergrpc

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
)

// FuzzTelegramUpdate feeds arbitrary webhook bodies through what the
// gateway and this adapter do with them: protojson decoding (unknown fields
// ignored, as the gateway does), conversion to the domain update, and the
// media descriptions sent to the model. Nothing may panic, and every
// description must be valid UTF-8.
func FuzzTelegramUpdate(f *testing.F) {
	seeds, _ := filepath.Glob("../chat/testdata/*.json")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"update_id":1,"message":{"message_id":2,"chat":{"id":3,"type":"group"},"text":"@bot hi","entities":[{"type":"mention","offset":-5,"length":99}],"reply_to_message":{"message_id":1,"chat":{"id":3},"sticker":{"emoji":"\u00ff"}}}}`))
	opts := protojson.UnmarshalOptions{DiscardUnknown: true}
	f.Fuzz(func(t *testing.T, body []byte) {
		var u notifierv1.TelegramUpdate
		if err := opts.Unmarshal(body, &u); err != nil {
			return
		}
		up := toUpdate(&u)
		for m, depth := up.Message, 0; m != nil && depth < 64; m, depth = m.ReplyTo, depth+1 {
			for _, media := range m.Media {
				if d := chat.Render(media); !utf8.ValidString(d) {
					t.Fatalf("Render(%+v) = %q, not valid UTF-8", media, d)
				}
			}
		}
	})
}
