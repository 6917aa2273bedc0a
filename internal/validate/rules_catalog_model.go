package validate

// File-based catalog rules for the checks upstream opm makes when it builds
// its catalog model (opm validate, opm serve): a catalog they refuse is
// refused by OLM too. Their checks live in internal/fbc.
var (
	RuleCatalogPackageName = register(&Rule{ID: "catalog-package-name", Severity: Error, Scope: ScopeCatalog,
		What: "Package names are RFC 1123 labels: at most 63 characters of lowercase letters, digits and '-', starting and ending with a letter or digit.",
		Why:  "OLM names Kubernetes objects after the package; upstream opm refuses a catalog with any other package name.",
		Fix:  "Rename the package (the olm.package blob and every blob's package field) to a lowercase DNS label, e.g. foo-bar."})
	RuleCatalogVersionUnique = register(&Rule{ID: "catalog-version-unique", Severity: Error, Scope: ScopeCatalog,
		What: "The bundles of a package's channels have distinct versions (version and release, as the olm.package property gives them).",
		Why:  "OLM orders bundles by version; two bundles of one version cannot be ordered, and upstream opm refuses the catalog.",
		Fix:  "Give one of the bundles another version (or a release), or drop it from the catalog."})
	RuleCatalogBundleImage = register(&Rule{ID: "catalog-bundle-image", Severity: Error, Scope: ScopeCatalog,
		What: "A bundle's image (set unless the bundle carries its manifests as olm.bundle.object) and every relatedImages image are valid image pull specs.",
		Why:  "OLM pulls these references; upstream opm refuses a catalog with one it cannot parse.",
		Fix:  "Write a pull spec such as quay.io/org/name:tag or quay.io/org/name@sha256:<digest> (repository names are lowercase)."})
	RuleCatalogRelease = register(&Rule{ID: "catalog-release", Severity: Error, Scope: ScopeCatalog,
		What: "A bundle whose olm.package property has a release is named <package>-v<version>-<release>; the release is dot-separated identifiers of [0-9A-Za-z-] (no leading zeros in numbers), at most 20 characters; the version then has no build metadata.",
		Why:  "Released bundles are told apart and ordered by version and release; upstream opm refuses names and releases that break these rules.",
		Fix:  "Rename the bundle <package>-v<version>-<release>, or correct the release."})
	RuleCatalogChannelStranded = register(&Rule{ID: "catalog-channel-stranded", Severity: Error, Scope: ScopeCatalog,
		What: "Every bundle of a channel is on the replaces chain from the channel head or is skipped by some entry.",
		Why:  "A stranded bundle can be neither installed from the head nor upgraded from; upstream opm refuses the channel.",
		Fix:  "Make a newer entry replace or skip the stranded bundle, or remove it from the channel."})
	RuleCatalogDeprecationUnique = register(&Rule{ID: "catalog-deprecation-unique", Severity: Error, Scope: ScopeCatalog,
		What: "Each package has at most one olm.deprecations blob; it names a package of the catalog and lists each reference once.",
		Why:  "OLM reads one deprecation list per package; upstream opm refuses a catalog with two, or with one for an unknown package.",
		Fix:  "Merge the olm.deprecations blobs of the package into one, and drop repeated entries."})
	RuleCatalogDeprecationReference = register(&Rule{ID: "catalog-deprecation-reference", Severity: Error, Scope: ScopeCatalog,
		What: "Each olm.deprecations entry references olm.package (without a name), or an olm.channel or olm.bundle of the package by name.",
		Why:  "OLM shows deprecations on the object referenced; upstream opm refuses unknown schemas and references to channels or bundles that do not exist.",
		Fix:  "Set reference.schema to olm.package, olm.channel or olm.bundle, and reference.name to an existing channel or bundle of the package (no name for olm.package)."})
	RuleCatalogDeprecationMessage = register(&Rule{ID: "catalog-deprecation-message", Severity: Error, Scope: ScopeCatalog,
		What: "Each olm.deprecations entry has a message.",
		Why:  "The message is what OLM shows users on their Subscription; upstream opm refuses an entry without one.",
		Fix:  "Write a message saying what to use instead."})
	RuleCatalogSubstitutesCycle = register(&Rule{ID: "catalog-substitutes-cycle", Severity: Error, Scope: ScopeCatalog,
		What: "The olm.substitutesFor annotations of a package's bundles (from their CSVs) form no cycle.",
		Why:  "A substitute takes the place of the bundle it names; a cycle leaves no bundle to install and is refused when an index is built from the bundles.",
		Fix:  "Make each substitute name an older bundle; remove the annotation that closes the cycle."})
)
