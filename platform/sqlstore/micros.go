package sqlstore

import "time"

// Micros is t as Unix microseconds, the BIGINT form the services store
// times in. The zero time is 0, so that an unset time reads back unset.
func Micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// FromMicros is the time Micros stored, in UTC; 0 is the zero time.
func FromMicros(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}
