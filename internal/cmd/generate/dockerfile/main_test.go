package dockerfile_test

import (
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }
