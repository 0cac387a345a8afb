package research

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: the
// research step fans lookups out to goroutines, and none may outlive it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
