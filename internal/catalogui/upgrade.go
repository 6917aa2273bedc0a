package catalogui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/fbc/graph/pathtext"
	"github.com/opmkit/opm/internal/resolve"
)

// upgradeView is the upgrade question of a package page: the form, and
// once asked (?from=), the answer of opm alpha upgrade-path.
type upgradeView struct {
	From, Channel string
	OLMv1         bool
	Channels      []string
	Asked         bool
	Answer        *pathtext.Text
	Error         string
}

// upgrade answers ?from=VERSION|BUNDLE&channel=C[&rules=olmv1] as
// opm alpha upgrade-path --from VERSION [--channel C] [--olmv1] does; the
// status is 400 when the question names what is not there.
func (u *ui) upgrade(r *http.Request, d *pkgData) (*upgradeView, int) {
	qs := r.URL.Query()
	v := &upgradeView{From: strings.TrimSpace(qs.Get("from")), Channel: qs.Get("channel"), OLMv1: qs.Get("rules") == graph.OLMv1}
	for _, ch := range d.channels {
		v.Channels = append(v.Channels, ch.Name)
	}
	if v.From == "" {
		return v, http.StatusOK
	}
	v.Asked = true
	p, err := graph.NewPackage(d.c, d.p.Name)
	if err != nil {
		v.Error = err.Error()
		return v, http.StatusInternalServerError
	}
	q := graph.PathQuery{From: v.From, Channel: v.Channel, OLMv1: v.OLMv1}
	if v.OLMv1 {
		var channels []string
		if v.Channel != "" {
			channels = []string{v.Channel}
		}
		q.ResolveV1 = resolve.ExtensionSteps(r.Context(), resolve.Catalog{Name: u.opts.CatalogName, Catalog: d.c}, d.p.Name, channels)
	}
	path, err := p.Path(q)
	if err != nil {
		v.Error = err.Error()
		var oe *graph.OrderError
		if errors.As(err, &oe) {
			// The catalog's channel, not the question, is at fault.
			return v, http.StatusOK
		}
		return v, http.StatusBadRequest
	}
	t := pathtext.Of(p, path)
	v.Answer = &t
	return v, http.StatusOK
}
