# Writes the file IN as a C++ raw string constant kEmbeddedQuickstart into OUT.
file(READ ${IN} CONTENT)
file(WRITE ${OUT} "// Generated from examples/quickstart.yaml; do not edit.\n#pragma once\n"
     "inline constexpr const char* kEmbeddedQuickstart = R\"TESSERA_YAML(${CONTENT})TESSERA_YAML\";\n")
