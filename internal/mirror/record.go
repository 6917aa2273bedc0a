package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/image"
)

// Each run keeps its report where it mirrored to, so that a later run of
// prune knows what earlier runs put there (a registry lists tags, not
// the manifests pushed by digest only):
//   - at a registry, as an OCI artifact in the repository ReportsRepo
//     under the destination's prefix, tagged by the run's time and
//     catalog (ReportTag);
//   - in a mirror directory, as a file beside opm-mirror.json named the
//     same way (opm-mirror-TAG.json).
const (
	// ReportsRepo is the repository, under the destination's prefix, the
	// reports are pushed to.
	ReportsRepo = "opm-mirror-reports"
	// ReportMediaType is the artifact type of a report, and the media type
	// of its one layer (the report's JSON).
	ReportMediaType = "application/vnd.opmkit.mirror.report.v1+json"
	// AnnotationCatalog names the catalog a report's run mirrored.
	AnnotationCatalog = "io.opmkit.mirror.catalog"
	// AnnotationTo names the destination of a report's run.
	AnnotationTo = "io.opmkit.mirror.to"
	// maxReportSize bounds a report read back (a release catalog's report
	// of thousands of images is a few MiB).
	maxReportSize = 256 << 20
)

// ReportTag is the tag of the report of a run started at start that
// mirrored catalog (a source reference, "" for none):
// 20261207T213000Z-operators-v1.
func ReportTag(start time.Time, catalog string) string {
	return start.UTC().Format("20060102T150405Z") + "-" + LatestReportTag(catalog)
}

// LatestReportTag is the tag of the latest report of the catalog (a
// source reference): its name, as in ReportTag, without the time.
func LatestReportTag(catalog string) string {
	if catalog == "" {
		return "images"
	}
	return objectName(catalog)
}

// ReportsRepository is the repository the reports of runs to to
// (REGISTRY[/PREFIX]) are kept in, flattened as the images are.
func ReportsRepository(to string, maxNested int) string {
	host, prefix, _ := strings.Cut(strings.TrimSuffix(to, "/"), "/")
	path := ReportsRepo
	if prefix != "" {
		path = prefix + "/" + path
	}
	return host + "/" + flatten(path, maxNested)
}

// reportCatalog is the source of the first catalog the report mirrored.
func reportCatalog(rep *Report) string {
	for _, r := range rep.Images {
		if r.Role == RoleCatalog {
			return r.Source
		}
	}
	return ""
}

// Record keeps rep where its run mirrored to: pushed as an artifact to
// the registry (rep.To), or written beside the mirror directory's
// report. It sets rep.Recorded to the reference or file, and returns it.
func Record(ctx context.Context, cl *image.Client, rep *Report, start time.Time) (string, error) {
	tag := ReportTag(start, reportCatalog(rep))
	if rep.toDir {
		path := filepath.Join(rep.To, "opm-mirror-"+tag+".json")
		for n := 2; isFile(path); n++ {
			// Two runs in one second: both kept.
			path = filepath.Join(rep.To, fmt.Sprintf("opm-mirror-%s-%d.json", tag, n))
		}
		rep.Recorded = path
		if err := atomicfile.Write(path, rep.WriteJSON); err != nil {
			rep.Recorded = ""
			return "", fmt.Errorf("keep the report beside %s: %w", ReportFile, err)
		}
		return path, nil
	}
	ref := ReportsRepository(rep.To, rep.MaxNestedPaths) + ":" + tag
	for n := 2; n < 100; n++ {
		// Two runs in one second: both kept, the later as TAG-2.
		if _, _, err := cl.ManifestDigest(ctx, ref); err != nil {
			break
		}
		ref = fmt.Sprintf("%s:%s-%d", ReportsRepository(rep.To, rep.MaxNestedPaths), tag, n)
	}
	rep.Recorded = ref
	body, err := reportBlob(rep)
	if err != nil {
		rep.Recorded = ""
		return "", err
	}
	created := start.UTC().Format(time.RFC3339)
	labels := map[string]string{
		"org.opencontainers.image.created": created,
		AnnotationCatalog:                  reportCatalog(rep),
		AnnotationTo:                       rep.To,
	}
	// An image config (not the empty one of OCI 1.1 artifacts), so that
	// skopeo inspect, which reads images only, shows the labels; the
	// artifactType and the layer's media type say what it is.
	config, err := json.Marshal(map[string]any{
		"created": created, "architecture": "unknown", "os": "unknown",
		"config": map[string]any{"Labels": labels},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{body.Digest.String()}},
	})
	if err != nil {
		return "", err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"artifactType":  ReportMediaType,
		"config":        descriptor("application/vnd.oci.image.config.v1+json", image.BytesBlob(config), nil),
		"layers": []any{descriptor(ReportMediaType, body, map[string]string{
			"org.opencontainers.image.title": ReportFile,
		})},
		"annotations": labels,
	})
	if err != nil {
		return "", err
	}
	if _, err := cl.PushArtifact(ctx, ref, manifest, "application/vnd.oci.image.manifest.v1+json", image.BytesBlob(config), body); err != nil {
		rep.Recorded = ""
		return "", fmt.Errorf("keep the report at %s: %w", ref, err)
	}
	// Also under the catalog's name alone: the latest report of each
	// catalog, which a monthly prune keeps without looking up the time.
	latest := ReportsRepository(rep.To, rep.MaxNestedPaths) + ":" + LatestReportTag(reportCatalog(rep))
	if _, err := cl.PushArtifact(ctx, latest, manifest, "application/vnd.oci.image.manifest.v1+json"); err != nil {
		return ref, fmt.Errorf("tag the report %s as %s: %w", ref, latest, err)
	}
	return ref, nil
}

// reportBlob is rep's JSON as a blob to push: its digest and size from
// writing it once, its bytes written again while they are uploaded, so
// that the report is never held whole in memory. It writes a copy of rep
// as it is now: the upload may still read it after Record has returned
// from a failed push.
func reportBlob(rep *Report) (image.Blob, error) {
	snap := *rep
	h := sha256.New()
	n := &countingWriter{w: h}
	if err := snap.WriteJSON(n); err != nil {
		return image.Blob{}, err
	}
	return image.Blob{Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}, Size: n.n,
		Open: func() (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			// Ends when the report is written or the reader is closed.
			go func() { pw.CloseWithError(snap.WriteJSON(pw)) }()
			return pr, nil
		}}, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func descriptor(mediaType string, b image.Blob, annotations map[string]string) map[string]any {
	d := map[string]any{"mediaType": mediaType, "digest": b.Digest.String(), "size": b.Size}
	if annotations != nil {
		d["annotations"] = annotations
	}
	return d
}

// ReadReport reads a report: a file (opm-mirror.json, or one kept beside
// it), or an artifact Record pushed to a registry.
func ReadReport(ctx context.Context, cl *image.Client, where string) (*Report, error) {
	if image.LooksLikeReference(where) && !isFile(where) {
		return readRemoteReport(ctx, cl, where)
	}
	raw, err := image.ReadRegular(where, maxReportSize)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", where, err)
	}
	return parseReport(where, raw)
}

func parseReport(where string, raw []byte) (*Report, error) {
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("report %s: %w (not a report of opm alpha mirror)", where, err)
	}
	if rep.Images == nil {
		return nil, fmt.Errorf("report %s lists no images (not a report of opm alpha mirror)", where)
	}
	return &rep, nil
}

// errNotReport is a manifest at the registry that is not a report.
type errNotReport struct{ ref, mediaType string }

func (e *errNotReport) Error() string {
	return fmt.Sprintf("%s is not a report of opm alpha mirror (its artifact type is %q, not %s)", e.ref, e.mediaType, ReportMediaType)
}

// readRemoteReport reads the report artifact at ref; a manifest that is
// not one is an *errNotReport.
func readRemoteReport(ctx context.Context, cl *image.Client, ref string) (*Report, error) {
	raw, _, _, err := cl.Manifest(ctx, ref)
	if err != nil {
		return nil, err
	}
	var m struct {
		ArtifactType string `json:"artifactType"`
		Config       struct {
			MediaType string `json:"mediaType"`
		} `json:"config"`
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if m.ArtifactType != ReportMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != ReportMediaType {
		what := m.ArtifactType
		if what == "" {
			what = m.Config.MediaType
		}
		return nil, &errNotReport{ref: ref, mediaType: what}
	}
	repo := ref
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	body, err := cl.Blob(ctx, repo+"@"+m.Layers[0].Digest, maxReportSize)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", ref, err)
	}
	return parseReport(ref, body)
}

// isFile: a file (or something else) is at p, which is then read as a
// file, not as an image reference.
func isFile(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
