# cudaenv tab completion for PowerShell. Add to $PROFILE:
#   cudaenv completion pwsh | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName 'cudaenv', 'cudaenv.exe' -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $words = [System.Collections.Generic.List[string]]::new()
  foreach ($element in @($commandAst.CommandElements | Select-Object -Skip 1)) {
    if ($element.Extent.StartOffset -ge $cursorPosition) { break }
    if ($wordToComplete -and $element.Extent.EndOffset -ge $cursorPosition) { break }
    if ($element -is [System.Management.Automation.Language.StringConstantExpressionAst]) {
      $words.Add(':' + $element.Value)
    } else {
      $words.Add(':' + $element.Extent.Text)
    }
  }
  $words.Add(':' + $wordToComplete)
  $lines = @(& cudaenv __complete @words 2>$null)
  foreach ($line in $lines) {
    # A directive (:dirs, :files, :commands): answer nothing, so that
    # PowerShell completes paths itself.
    if ($line.StartsWith(':')) { return }
    if (-not $line) { continue }
    $value, $tip = $line -split "`t", 2
    if (-not $tip) { $tip = $value }
    [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $tip)
  }
}
