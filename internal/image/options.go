package image

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/bytesize"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxLayerSize int64 = 512 << 20
	// DefaultMaxImageSize caps the files of all layers of an image read as a
	// filesystem (a bundle): real bundles are a few MiB.
	DefaultMaxImageSize int64 = 256 << 20
	// DefaultMaxDatabaseSize caps the layer holding an index image's database.
	DefaultMaxDatabaseSize int64 = 4 << 30
	DefaultPlatform              = "linux/amd64"
	DefaultRetries               = 3
	// DefaultRegistryTimeout is how long a registry may keep opm waiting for
	// a connection, a TLS handshake, response headers, or the next bytes of
	// a body. With DefaultRetries a registry that stalls outright fails
	// within (3+1)×10 s plus backoff, under a minute; opm names it after
	// half the timeout (at most 5 s), so the wait is not silent.
	DefaultRegistryTimeout = 10 * time.Second
	// DefaultMinTransferRate is the slowest a registry may send a body,
	// in bytes a second, judged over rateWindows × --registry-timeout
	// (30 s by default): slower, the transfer fails and is retried as a
	// stalled one is.
	DefaultMinTransferRate int64 = 1 << 10
	// Files up to SpillFileSize stay in memory while the whole tree stays under
	// SpillTotalSize; anything beyond goes to a temporary file.
	DefaultSpillFileSize  int64 = 32 << 20
	DefaultSpillTotalSize int64 = 128 << 20
)

// Options are the image access settings every opm command shares.
type Options struct {
	// SkipTLSVerify accepts any server certificate (and allows plain HTTP as a fallback).
	SkipTLSVerify bool
	// UseHTTP talks plain HTTP to registries. Mutually exclusive with SkipTLSVerify.
	UseHTTP bool
	// CAFile is a PEM bundle of extra certificate authorities trusted for registries.
	CAFile string
	// AuthFile is consulted first for credentials (see docs/images.md for the order).
	AuthFile string
	// Platform picks the image from a manifest list or OCI index: os/arch[/variant].
	Platform string
	// MaxLayerSize caps a layer's compressed and uncompressed size and any single entry.
	MaxLayerSize int64
	// MaxImageSize caps the sum of the file sizes over all layers of an image
	// read as a filesystem (sparse files at their expanded size, a layer
	// listed twice counted twice), and the bytes spilled to disk meanwhile.
	MaxImageSize int64
	// MaxDatabaseSize caps the layer (compressed and uncompressed) and the
	// file read as an index image's database, instead of MaxLayerSize.
	MaxDatabaseSize int64
	// Retries is how many times a failed registry request (5xx, 429, connection
	// reset) is retried with backoff; 0 means DefaultRetries, negative means none.
	Retries int
	// RetryDelay is the first backoff delay (doubled on each retry); 0 means 200ms.
	RetryDelay time.Duration
	// ResponseTimeout is how long to wait for a connection to a registry,
	// its TLS handshake, or its response headers; 0 means
	// DefaultRegistryTimeout.
	ResponseTimeout time.Duration
	// IdleTimeout is how long a response body may send nothing before the
	// read fails (and a blob download resumes on a new connection); 0 means
	// DefaultRegistryTimeout.
	IdleTimeout time.Duration
	// MinTransferRate is the slowest a response body may arrive, in bytes
	// a second over rateWindows × IdleTimeout of waiting for it; 0 means
	// DefaultMinTransferRate, negative means any rate.
	MinTransferRate int64
	// RegistriesConf is the registries.conf to read instead of the
	// containers defaults (--registries-conf, CONTAINERS_REGISTRIES_CONF);
	// its drop-in directory is the same path with ".d".
	RegistriesConf string
	// Src and Dest, when set, replace SkipTLSVerify and UseHTTP for the
	// registries a copy reads from (every pull) and writes to (every
	// push): opm alpha mirror's --src-* and --dest-* flags.
	Src, Dest Side
	// SignaturePolicy is the containers policy.json every registry pull is
	// checked against; "" looks it up as podman does (see PolicyPath).
	SignaturePolicy string
	// RegistriesDir overrides the registries.d directory that says where
	// signatures are (use-sigstore-attachments, lookaside); "" is the
	// containers default.
	RegistriesDir string
	// TempDir is where large layer files spill to and archives are unpacked; "" is os.TempDir().
	TempDir string
	// SpillFileSize and SpillTotalSize bound what a flattened filesystem keeps in memory.
	SpillFileSize, SpillTotalSize int64
	// Warn receives warnings meant for the user (such as a fall back to
	// plain HTTP), once each; when nil they are kept for Client.Warnings.
	Warn func(msg string)
	// Traffic, when set, counts the bytes exchanged with registries (for a
	// progress display); clients made from copies of these options share it.
	Traffic *Traffic
	// RateLimits, when set, counts the waits registries asked for (429
	// and 503 with Retry-After); clients made from copies share it.
	RateLimits *RateLimits
}

// Side is the transport of one side of a copy. When either field is
// set, the side's fields replace both of the global flags for that side:
// --dest-use-http alone means plain HTTP there, whatever
// --skip-tls-verify says.
type Side struct {
	// TLSVerify false skips certificate verification (and allows a plain
	// HTTP fallback), as --skip-tls-verify does.
	TLSVerify *bool
	// UseHTTP true talks plain HTTP, as --use-http does.
	UseHTTP *bool
}

func (s Side) set() bool { return s.TLSVerify != nil || s.UseHTTP != nil }

// transport is the side's (skip TLS verification, plain HTTP) under the
// global flags o.
func (s Side) transport(o *Options) (skipVerify, useHTTP bool) {
	if !s.set() {
		return o.SkipTLSVerify, o.UseHTTP
	}
	return s.TLSVerify != nil && !*s.TLSVerify, s.UseHTTP != nil && *s.UseHTTP
}

// side is the transport for pulls (push false) or pushes (push true).
func (o *Options) side(push bool) (skipVerify, useHTTP bool) {
	if push {
		return o.Dest.transport(o)
	}
	return o.Src.transport(o)
}

// Flag names, shared so that commands and docs agree.
const (
	FlagSkipTLSVerify = "skip-tls-verify"
	FlagUseHTTP       = "use-http"
	FlagCAFile        = "ca-file"
	FlagAuthFile      = "authfile"
	FlagPlatform      = "platform"
	FlagMaxLayerSize  = "max-layer-size"
	FlagMaxImageSize  = "max-image-size"
	FlagMaxDBSize     = "max-database-size"
	FlagRetries       = "retries"
	FlagTimeout       = "registry-timeout"
	// FlagMinTransferRate names the slowest transfer accepted.
	FlagMinTransferRate = "min-transfer-rate"
	// FlagSignaturePolicy names the containers policy.json for pulls.
	FlagSignaturePolicy = "signature-policy"
	// FlagRegistriesConf names the registries.conf read instead of the
	// defaults; EnvRegistriesConf is its environment variable, as for
	// podman and skopeo.
	FlagRegistriesConf = "registries-conf"
	EnvRegistriesConf  = "CONTAINERS_REGISTRIES_CONF"
	// Per-side transport flags of a copy (AddSideFlags).
	FlagSrcTLSVerify  = "src-tls-verify"
	FlagDestTLSVerify = "dest-tls-verify"
	FlagSrcUseHTTP    = "src-use-http"
	FlagDestUseHTTP   = "dest-use-http"
)

// AddFlags registers the shared image flags on fs, bound to o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.SkipTLSVerify, FlagSkipTLSVerify, o.SkipTLSVerify, "skip TLS certificate verification for registries")
	fs.BoolVar(&o.UseHTTP, FlagUseHTTP, o.UseHTTP, "use plain HTTP for registries")
	fs.StringVar(&o.CAFile, FlagCAFile, o.CAFile, "PEM file of extra certificate authorities for registries")
	fs.StringVar(&o.AuthFile, FlagAuthFile, o.AuthFile, "registry credentials file, consulted before REGISTRY_AUTH_FILE and the docker/containers defaults")
	fs.StringVar(&o.Platform, FlagPlatform, o.Platform, "platform to pick from multi-arch images, os/arch[/variant] (default "+DefaultPlatform+")")
	fs.Var(bytesize.Flag(&o.MaxLayerSize), FlagMaxLayerSize, fmt.Sprintf("largest layer or layer entry accepted, e.g. 1GiB or bytes (default %s)", bytesize.Format(DefaultMaxLayerSize)))
	fs.Var(bytesize.Flag(&o.MaxImageSize), FlagMaxImageSize, fmt.Sprintf("largest total of the files of all layers of a bundle image, e.g. 512MiB or bytes (default %s)", bytesize.Format(DefaultMaxImageSize)))
	fs.Var(bytesize.Flag(&o.MaxDatabaseSize), FlagMaxDBSize, fmt.Sprintf("largest database layer of an index image, e.g. 8GiB or bytes (default %s)", bytesize.Format(DefaultMaxDatabaseSize)))
	fs.Var(retriesFlag{o}, FlagRetries, fmt.Sprintf("retries for failed registry requests (default %d; 0 for none); a 429 or 503 with Retry-After is waited out instead, not counted", DefaultRetries))
	fs.StringVar(&o.SignaturePolicy, FlagSignaturePolicy, o.SignaturePolicy, "containers policy.json that every image pull is verified against (default: ~/.config/containers/policy.json, then /etc/containers/policy.json)")
	fs.StringVar(&o.RegistriesConf, FlagRegistriesConf, o.RegistriesConf, "containers registries.conf (mirrors, insecure and blocked registries) read instead of $"+EnvRegistriesConf+", ~/.config/containers/registries.conf and /etc/containers/registries.conf")
	fs.Var(timeoutFlag{o}, FlagTimeout, fmt.Sprintf("longest wait for a registry to connect, answer, or send more bytes, before retrying (default %s)", DefaultRegistryTimeout))
	fs.Var(rateFlag{o}, FlagMinTransferRate, fmt.Sprintf("slowest transfer from a registry accepted, judged over three times --%s, before retrying, e.g. 10KiB/s (default %s/s; 0 for any)", FlagTimeout, bytesize.Format(DefaultMinTransferRate)))
}

// AddSideFlags registers the per-side transport flags of a command that
// copies from registries to registries, bound to o.Src and o.Dest.
func (o *Options) AddSideFlags(fs *pflag.FlagSet) {
	add := func(p **bool, name, usage string) {
		f := fs.VarPF(optionalBool{p}, name, "", usage)
		f.NoOptDefVal = "true"
	}
	add(&o.Src.TLSVerify, FlagSrcTLSVerify, "verify the TLS certificates of the registries pulled from (=false: as --"+FlagSkipTLSVerify+", for them only; default: the global flags)")
	add(&o.Dest.TLSVerify, FlagDestTLSVerify, "verify the TLS certificate of the registry pushed to (=false: as --"+FlagSkipTLSVerify+", for it only; default: the global flags)")
	add(&o.Src.UseHTTP, FlagSrcUseHTTP, "use plain HTTP for the registries pulled from only (default: the global flags)")
	add(&o.Dest.UseHTTP, FlagDestUseHTTP, "use plain HTTP for the registry pushed to only (default: the global flags)")
}

// optionalBool is a bool flag that tells unset from false.
type optionalBool struct{ p **bool }

func (b optionalBool) String() string {
	if b.p == nil || *b.p == nil {
		return ""
	}
	return strconv.FormatBool(**b.p)
}

func (b optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*b.p = &v
	return nil
}

func (optionalBool) Type() string     { return "bool" }
func (optionalBool) IsBoolFlag() bool { return true }

// ErrFlagConflict is returned when --skip-tls-verify and --use-http are both set.
var ErrFlagConflict = errors.New("--skip-tls-verify and --use-http are mutually exclusive")

// Validate checks the options and fills in defaults.
func (o *Options) Validate() error {
	if o.SkipTLSVerify && o.UseHTTP {
		return ErrFlagConflict
	}
	for _, s := range []struct {
		side        Side
		verify, use string
	}{{o.Src, FlagSrcTLSVerify, FlagSrcUseHTTP}, {o.Dest, FlagDestTLSVerify, FlagDestUseHTTP}} {
		if skip, use := s.side.transport(o); s.side.set() && skip && use {
			return fmt.Errorf("--%s=false and --%s are mutually exclusive (plain HTTP has no certificate to verify: give --%s alone)", s.verify, s.use, s.use)
		}
	}
	if o.RegistriesConf != "" {
		// sysregistriesv2 reads a missing file as an empty one: a
		// mistyped path would silently drop every mirror.
		if _, err := os.Stat(o.RegistriesConf); err != nil {
			return fmt.Errorf("registries.conf (--%s or $%s): %w", FlagRegistriesConf, EnvRegistriesConf, err)
		}
	}
	if o.MaxLayerSize < 0 {
		return fmt.Errorf("--%s must not be negative", FlagMaxLayerSize)
	}
	if o.MaxLayerSize == 0 {
		o.MaxLayerSize = DefaultMaxLayerSize
	}
	if o.MaxImageSize < 0 {
		return fmt.Errorf("--%s must not be negative", FlagMaxImageSize)
	}
	if o.MaxImageSize == 0 {
		o.MaxImageSize = DefaultMaxImageSize
	}
	if o.MaxDatabaseSize < 0 {
		return fmt.Errorf("--%s must not be negative", FlagMaxDBSize)
	}
	if o.MaxDatabaseSize == 0 {
		o.MaxDatabaseSize = DefaultMaxDatabaseSize
	}
	if o.Platform == "" {
		o.Platform = DefaultPlatform
	}
	if _, err := ParsePlatform(o.Platform); err != nil {
		return err
	}
	// Negative stays negative: Validate runs again on options it has
	// filled in (a command's, then the client's), and none must not
	// become the default.
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = 200 * time.Millisecond
	}
	if o.ResponseTimeout < 0 || o.IdleTimeout < 0 {
		return fmt.Errorf("--%s must not be negative", FlagTimeout)
	}
	if o.ResponseTimeout == 0 {
		o.ResponseTimeout = DefaultRegistryTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultRegistryTimeout
	}
	if o.MinTransferRate == 0 {
		o.MinTransferRate = DefaultMinTransferRate
	}
	if o.SpillFileSize == 0 {
		o.SpillFileSize = DefaultSpillFileSize
	}
	if o.SpillTotalSize == 0 {
		o.SpillTotalSize = DefaultSpillTotalSize
	}
	return nil
}

// retries is how many times a failed request is retried (Retries, none
// when negative).
func (o *Options) retries() int { return max(o.Retries, 0) }

// rateWindows is how many registry timeouts the transfer rate is judged
// over: long enough that a registry allowed to pause for the timeout is
// not failed for the pause alone.
const rateWindows = 3

// minRate is the slowest body accepted (bytes a second, 0 for any) and
// the window it is judged over.
func (o *Options) minRate() (int64, time.Duration) {
	return max(o.MinTransferRate, 0), rateWindows * o.IdleTimeout
}

// requestBound is the longest one request to a registry may take with
// its retries, however the registry behaves: each attempt waits for an
// answer, then for a body judged over rateWindows timeouts plus one idle
// timeout, and the backoff between attempts doubles from RetryDelay.
func (o *Options) requestBound() time.Duration {
	attempts := o.retries() + 1
	backoff := o.RetryDelay * time.Duration(1<<min(attempts, 20)-1) // one delay more than needed, for jitter
	return time.Duration(attempts)*(o.ResponseTimeout+(rateWindows+1)*o.IdleTimeout) + backoff
}

// Platform is an os/arch[/variant] triple.
type Platform struct {
	OS, Architecture, Variant string
}

func (p Platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// ParsePlatform parses "os/arch[/variant]".
func ParsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Platform{}, fmt.Errorf("invalid platform %q: want os/arch[/variant], such as linux/amd64", s)
	}
	p := Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// retriesFlag sets Retries from the command line, where 0 means what it
// says, no retries (Options' zero value means the default).
type retriesFlag struct{ o *Options }

func (f retriesFlag) String() string {
	switch {
	case f.o == nil || f.o.Retries == 0:
		return ""
	case f.o.Retries < 0:
		return "0"
	}
	return strconv.Itoa(f.o.Retries)
}

func (f retriesFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a number of retries, such as 3 (0 for none)")
	}
	if n <= 0 {
		n = -1
	}
	f.o.Retries = n
	return nil
}

func (retriesFlag) Type() string { return "int" }

// timeoutFlag sets both registry timeouts from one duration flag.
type timeoutFlag struct{ o *Options }

func (f timeoutFlag) String() string {
	if f.o == nil || f.o.ResponseTimeout == 0 {
		return ""
	}
	return f.o.ResponseTimeout.String()
}

func (f timeoutFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("must be positive, such as 30s")
	}
	f.o.ResponseTimeout, f.o.IdleTimeout = d, d
	return nil
}

func (timeoutFlag) Type() string { return "duration" }

// rateFlag sets MinTransferRate from a size a second (10KiB, 10KiB/s), 0
// meaning any rate (Options' zero value means the default).
type rateFlag struct{ o *Options }

func (f rateFlag) String() string {
	switch {
	case f.o == nil || f.o.MinTransferRate == 0:
		return ""
	case f.o.MinTransferRate < 0:
		return "0"
	}
	return bytesize.Format(f.o.MinTransferRate) + "/s"
}

func (f rateFlag) Set(s string) error {
	n, err := bytesize.Parse(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil {
		return fmt.Errorf("want bytes a second, such as 1KiB or 1KiB/s (0 for any rate): %w", err)
	}
	if n == 0 {
		n = -1
	}
	f.o.MinTransferRate = n
	return nil
}

func (rateFlag) Type() string { return "rate" }
