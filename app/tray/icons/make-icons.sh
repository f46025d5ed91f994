#!/usr/bin/env bash
# Regenerates the tray icons from build/appicon.png with ImageMagick 6 (64x64 PNGs):
# idle is the app icon; working adds a green "..." badge, needs-you an orange "!",
# down greys the icon and adds a red cross. Run from anywhere; commit the PNGs.
set -euo pipefail
cd "$(dirname "$0")"
C=${CONVERT:-/usr/bin/convert}
out=(-depth 8 -strip -define png:exclude-chunks=date,time)
badge=(-fill white -draw "circle 47,47 47,28")
"$C" ../../../build/appicon.png -resize 64x64 "${out[@]}" idle.png
"$C" idle.png "${badge[@]}" -fill '#2e9d4f' -draw "circle 47,47 47,31" \
  -fill white -draw "circle 40,47 40,44.5" -draw "circle 47,47 47,44.5" -draw "circle 54,47 54,44.5" \
  "${out[@]}" working.png
"$C" idle.png "${badge[@]}" -fill '#e67e22' -draw "circle 47,47 47,31" \
  -fill white -draw "roundrectangle 44.5,36 49.5,51 2,2" -draw "circle 47,56 47,53.3" \
  "${out[@]}" needs-you.png
"$C" idle.png -colorspace Gray -colorspace sRGB "${badge[@]}" -fill '#c0392b' -draw "circle 47,47 47,31" \
  -stroke white -strokewidth 4 -draw "line 41,41 53,53" -draw "line 53,41 41,53" \
  "${out[@]}" down.png
