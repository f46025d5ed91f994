package uifont

/*
#cgo pkg-config: fontconfig
#include <stdlib.h>
#include <string.h>
#include <fontconfig/fontconfig.h>

// uifont_match returns the family fontconfig matches name to (malloc'd), or NULL.
static char *uifont_match(const char *name) {
	FcPattern *p = FcNameParse((const FcChar8 *)name);
	if (p == NULL) return NULL;
	char *out = NULL;
	if (FcConfigSubstitute(NULL, p, FcMatchPattern)) {
		FcDefaultSubstitute(p);
		FcResult res;
		FcPattern *m = FcFontMatch(NULL, p, &res);
		if (m != NULL) {
			FcChar8 *family = NULL;
			if (FcPatternGetString(m, FC_FAMILY, 0, &family) == FcResultMatch && family != NULL)
				out = strdup((const char *)family);
			FcPatternDestroy(m);
		}
	}
	FcPatternDestroy(p);
	return out;
}
*/
import "C"

import "unsafe"

// SystemUI returns the family fontconfig matches `system-ui` to (e.g. "Cantarell" on
// GNOME, "DejaVu Sans" where none of fontconfig's system-ui fonts is installed), or ""
// when fontconfig matches no font. It loads fontconfig's configuration on first use
// (tens of ms; fontconfig is thread-safe since 2.10.91), so call it off the start-up
// path, e.g. in a goroutine at launch.
func SystemUI() string {
	name := C.CString("system-ui")
	defer C.free(unsafe.Pointer(name))
	out := C.uifont_match(name)
	if out == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoString(out)
}
