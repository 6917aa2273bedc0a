package layerfs

import (
	"testing"

	"github.com/opmkit/opm/internal/image/layerfs/tartest"
)

type tarEntry = tartest.Entry

func makeTar(t testing.TB, entries ...tarEntry) []byte { return tartest.Make(t, entries...) }
