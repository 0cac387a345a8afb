package enginehttp

import (
	"testing"
	"time"
)

func TestTimeRange(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		maxAge time.Duration
		want   string
	}{
		{0, ""}, {-time.Hour, ""}, {time.Hour, "day"}, {day, "day"}, {25 * time.Hour, "week"},
		{7 * day, "week"}, {30 * day, "month"}, {200 * day, "year"}, {400 * day, ""},
	}
	for _, tt := range tests {
		if got := TimeRange(tt.maxAge); got != tt.want {
			t.Errorf("TimeRange(%v) = %q, want %q", tt.maxAge, got, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2024-11-12T00:00:00.000Z", time.Date(2024, 11, 12, 0, 0, 0, 0, time.UTC)},
		{"2024-11-12T10:00:00+02:00", time.Date(2024, 11, 12, 8, 0, 0, 0, time.UTC)},
		{"2025-01-21T14:05:09", time.Date(2025, 1, 21, 14, 5, 9, 0, time.UTC)},
		{"2025-01-21 14:05:09", time.Date(2025, 1, 21, 14, 5, 9, 0, time.UTC)},
		{"2025-01-21", time.Date(2025, 1, 21, 0, 0, 0, 0, time.UTC)},
		{"Tue, 14 May 2024 08:12:00 GMT", time.Date(2024, 5, 14, 8, 12, 0, 0, time.UTC)},
		{"", time.Time{}},
		{"January 21, 2025", time.Time{}},
	}
	for _, tt := range tests {
		if got := ParseTime(tt.in); !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBodyExcerpt(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Too Many Requests\n", "Too Many Requests"},
		{"<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>", "403 Forbidden Forbidden"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := bodyExcerpt([]byte(tt.in)); got != tt.want {
			t.Errorf("bodyExcerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
