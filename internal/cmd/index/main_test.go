package index_test

import (
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

// Some tests run opm as a child process in its own directory.
func TestMain(m *testing.M) { cmdtest.Main(m) }
