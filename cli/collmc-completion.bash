# bash completion for collmc; cmake --install puts it in share/bash-completion/completions/collmc.
# Commands, families and options are read from the binary's own help (`collmc --help`,
# `collmc gen --help`, `collmc CMD --help`), so they cannot drift from it.
_collmc() {
  local cur=${COMP_WORDS[COMP_CWORD]} collmc=${COMP_WORDS[0]}
  local cmd=${COMP_WORDS[1]} sub="" words
  if ((COMP_CWORD == 1)); then
    words=$("$collmc" --help 2>/dev/null | sed -n 's/^  collmc \([a-z-]*\).*/\1/p')
    COMPREPLY=($(compgen -W "$words help --help --version" -- "$cur"))
    return
  fi
  if [[ $cmd == help ]]; then
    ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "$("$collmc" --help 2>/dev/null |
      sed -n 's/^  collmc \([a-z-]*\).*/\1/p')" -- "$cur"))
    return
  fi
  if [[ $cmd == gen || $cmd == trace ]]; then
    if ((COMP_CWORD == 2)); then
      # `collmc gen --help` lists the families, `collmc trace --help` the commands, as "  NAME".
      words=$("$collmc" "$cmd" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\)$/\1/p')
      COMPREPLY=($(compgen -W "$words --help" -- "$cur"))
      return
    fi
    sub=${COMP_WORDS[2]}
  fi
  if [[ $cmd == record ]]; then
    # After `--` (or the program) the words belong to the program.
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
      if [[ ${COMP_WORDS[i]} == -- ]]; then
        COMPREPLY=($(compgen -c -f -- "$cur"))
        return
      fi
    done
  fi
  if [[ $cur == -* ]]; then
    words=$("$collmc" "$cmd" $sub --help 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u)
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -o bashdefault -F _collmc collmc
