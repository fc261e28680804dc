"""Pure, bit-exact semantic functions, one per PTX instruction (chapter 9.7 of the PTX ISA)."""
