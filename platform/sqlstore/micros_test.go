package sqlstore

import (
	"testing"
	"time"
)

func TestMicrosRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want int64
		back time.Time
	}{
		{"zero stays unset", time.Time{}, 0, time.Time{}},
		{"UTC", time.Date(2026, 11, 25, 7, 0, 0, 123456789, time.UTC), 1795590000123456, time.Date(2026, 11, 25, 7, 0, 0, 123456000, time.UTC)},
		{"other zone reads back in UTC", time.Date(2026, 11, 25, 8, 0, 0, 0, time.FixedZone("CET", 3600)), 1795590000000000, time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), -1000000, time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Micros(tt.in)
			if got != tt.want {
				t.Errorf("Micros(%v) = %d, want %d", tt.in, got, tt.want)
			}
			if back := FromMicros(got); !back.Equal(tt.back) || back.Location() != tt.back.Location() {
				t.Errorf("FromMicros(%d) = %v, want %v", got, back, tt.back)
			}
		})
	}
}
