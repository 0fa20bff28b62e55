"""The closed word lists of the clause grammar, and content words of a noun phrase.

Every list is a closed set on purpose: a word the grammar does not know is never a predicate,
never a preposition that opens an input, never a generic answer — so an unknown wording
leads to *no* reading (the strict default), not to a guessed one.
"""

from __future__ import annotations

from collections.abc import Iterable

from critpt_grader.statement.text import Token, closed

# Verbs that ask for the reported output ("Report E …", "returning …", "Keep two digits").
DIRECTIVE = closed(
    """report reports reporting give gives giving return returns returning compute computes
    computing calculate calculates calculating evaluate evaluates evaluating find finds finding
    determine determines determining obtain obtains obtaining express expresses expressing keep
    keeps keeping provide provides providing round rounds estimate estimates estimating output
    outputs outputting present presents presenting write writes writing state states stating
    quote quotes quoting list lists listing record records recording predict predicts
    predicting retain retains retaining derive derives deriving specify specifies specifying
    print prints printing produce produces producing deliver delivers answer tabulate"""
)
# Directive words that are also nouns ("the ground state", "a list"): verbs only where a verb
# can stand — at the start of a clause, after "and", "to", a modal or a comma.
AMBIGUOUS = closed(
    """state states list lists answer answers record records output outputs print prints round
    rounds estimate estimates present presents report reports produce produces quote quotes
    return returns find finds keep keeps"""
)
VERB_SLOT = closed(
    """and or then to please also finally first now you we should must can will shall
    need needs simply but so yet thus hence otherwise instead"""
)
# Directives that only place or list the output; "in any order" is honoured after these (after
# "compute"/"find" it may describe how the work is done, not the returned list).
LISTING = closed(
    """report reports reporting give gives giving return returns returning output outputs
    outputting provide provides providing present presents presenting write writes writing
    state states stating list lists listing record records recording print prints printing
    store stores storing come comes coming appear appears appearing"""
)
COPULA = closed("is are was were be been being")
MODAL = closed("should must shall will would can could may might need needs please ought")
# Modals that allow rather than ask: "the states can be listed in any order".
PERMISSION = closed("can could may might")
# Participles and adjectives that, after a modal, ask for the reported output ("should be
# given to four decimal places") or, after any copula, say how it is graded.
REPORTING_PARTICIPLE = closed(
    """given reported returned rounded expressed computed calculated evaluated quoted stated
    written presented provided kept listed output printed recorded determined obtained found
    accurate correct precise exact"""
)
GRADING = closed(
    """graded accepted compared checked scored judged considered marked counted treated
    assessed tested verified"""
)
# After a copula these say what is output ("the energies are returned as a list"), or what is
# asked for ("the width is only needed to 2 significant figures"), with or without a modal.
RETURNING = closed(
    """returned reported output outputted listed printed recorded needed required wanted
    expected requested desired"""
)
# Qualifiers that mark a quantity as not reported: "round intermediate results to …".
INNER = closed("intermediate auxiliary internal internally input inputs trial partial")
# Finite verbs that describe a quantity: "the trap frequency drifts within 2%".
DESCRIPTIVE = closed(
    """varies vary fluctuates fluctuate drifts drift deviates deviate differs differ changes
    change remains remain stays stay has have had carries carry holds hold enters enter
    exceeds exceed lies lie"""
)
# Adjectives and participles that follow the noun they qualify: "a mass accurate to four
# significant figures", "the width rounded to 2 decimal places".
POSTNOMINAL = closed(
    """accurate accurately correct correctly precise precisely known given measured stable
    quoted specified determined calibrated rounded exact reliable tabulated listed provided
    computed calculated evaluated reported returned expressed kept defined fixed uncertain
    graded accepted"""
)
# Process verbs: "the states may be enumerated in any order" says how work is done.
PROCESS = closed(
    """enumerated labelled labeled indexed summed added visited iterated traversed processed
    applied performed carried generated constructed computed calculated evaluated counted
    numbered chosen taken picked multiplied integrated diagonalized diagonalised sorted
    summed"""
)
# Words after which a noun phrase is an input, a parameter or a detail, not the answer.
INPUT_OPENERS = closed(
    """using use uses with from via taking take takes given assuming assume assumes for of by
    at in on under than like into where whose which whom if when while whereas"""
)
# The openers that make a noun phrase an input even when a parenthetical qualifies it.
STRONG_INPUT = closed(
    """using use uses with from via taking take takes given assuming assume assumes where
    whose which whom if when while whereas"""
)
# Words that end the head of a noun phrase ("the energy | of the ground states").
HEAD_STOP = closed(
    """in at for with on from by under over between within using via to as into per near after
    before across along around than where when which that whose who whom if while you we one
    computed calculated obtained given measured evaluated found determined derived expressed
    defined reported returned rounded accurate"""
)
SPLIT_AFTER_COMMA = closed(
    "so while whereas but although though since because hence thus then otherwise"
)
SUBORDINATORS = closed("which where whose when if unless whereas while")
QUESTION = closed("what which how")
COORDINATORS = closed("and or then")

# A noun phrase made only of these (after determiners) means the requested answer.
GENERIC = closed(
    """answer answers result results value values number numbers output outputs quantity
    quantities it them they these those this everything estimate estimates solution solutions
    figure figures entry entries one ones both each all"""
)
# "Other outputs", "the remaining quantities", "the rest": the outputs no other clause names.
OTHERS = closed("other others remaining rest")
# Finite verbs by which a noun phrase is granted a precision: "Other outputs permit …".
GRANTING = closed("permit permits allow allows tolerate tolerates accept accepts admit admits")
# "the tuple of …", "a list of …": a noun phrase about the returned value as a whole.
CONTAINERS = closed("tuple pair triple list set dict dictionary map array")
# Qualifiers that say a noun phrase is the reported output ("the returned vector").
RETURNED = closed("returned reported output final requested your")
DETERMINERS = closed(
    """the a an this that these those its their your our his her all both each every any some
    such only also just then now here so very exactly precisely approximately final numerical
    numeric resulting requested desired corresponding respective respectively following same
    returned reported output computed obtained calculated two three four five six several
    various of"""
)
_NOT_CONTENT = (
    DETERMINERS
    | GENERIC
    | OTHERS
    | RETURNED
    | HEAD_STOP
    | COPULA
    | MODAL
    | closed(
        """and or not no is be python sympy float floats int ints list tuple set dict str
    string expression expressions symbol format"""
    )
)


def stem(word: str) -> str:
    """A crude plural fold: energies → energy, states → state, boxes → box."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _content(token: Token, exclude: Iterable[str]) -> str | None:
    if token.kind != "word" or token.text in exclude:
        return None
    parts = [p for p in token.lower.split("-") if p]
    if not parts:
        return None
    word = parts[-1]
    if len(word) < 2 or word in _NOT_CONTENT or not word.isalpha():
        return None
    return stem(word)


def content_words(found: Iterable[Token], exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """Content words (stemmed), hyphenated words split: ground-state → ground, state."""
    exclude = tuple(exclude)
    words: list[str] = []
    for token in found:
        if token.kind != "word" or token.text in exclude:
            continue
        for part in token.lower.split("-"):
            if len(part) >= 2 and part.isalpha() and part not in _NOT_CONTENT:
                words.append(stem(part))
    return tuple(words)


def head_noun(found: Iterable[Token], exclude: Iterable[str] = ()) -> str:
    """The head noun of a noun phrase: the last noun of its first group ("critical Rayleigh
    number" → ``number``), read through "value of", "number of" … while the group is
    generic ("the value of the gap" → ``gap``)."""
    exclude = tuple(exclude)
    head = ""
    only_generic = True
    for token in found:
        if token.kind == "punct":
            if token.text in ",;()[].:" and head:
                break
            continue
        if token.kind != "word" or token.text in exclude:
            continue
        word = token.lower.split("-")[-1]
        if word in HEAD_STOP or word == "of":
            if word == "of" and only_generic:
                continue
            if head:
                break
            continue
        if word in GENERIC_NOUNS:
            head = stem(word)
            continue
        content = _content(token, exclude)
        if content:
            head, only_generic = content, False
    return head


# Generic words that are nouns (a head), as opposed to pronouns and quantifiers.
GENERIC_NOUNS = closed(
    """answer answers result results value values number numbers output outputs quantity
    quantities estimate estimates solution solutions figure figures entry entries"""
)

# --- the returned object and its members ------------------------------------------------------

# Verbs whose object is what the task returns ("Return the spin state", "… and return it").
RETURNING_VERBS = closed(
    """return returns returning report reports reporting give gives giving output outputs
    outputting provide provides providing"""
)
# A lone pronoun object ("… and return it") stands for the object of the verb before it.
PRONOUNS = closed("it them this these they those")
# Words that end the object of a returning verb: "Return the state | as a list".
OBJECT_STOP = closed(
    """as in with using for from at to up within via by into so such then rounded accurate
    correct expressed written given which where whose that if when while whereas because
    since but"""
)
# Participles that end an object after its noun, not before it: "the eigenvector *normalized*
# to one" (but "the *normalized* eigenvector").
OBJECT_PARTICIPLES = closed(
    "normalized normalised sorted ordered obtained computed calculated found defined fixed"
)
# Members of a returned value: "the first entry", "the value under 'm'".
MEMBER_NOUNS = closed(
    """entry entries element elements component components item items member members value
    values number numbers output outputs result results coordinate coordinates key keys field
    fields"""
)
ORDINALS = {
    "first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "sixth": 5, "seventh": 6,
    "eighth": 7, "ninth": 8, "tenth": 9, "last": -1, "1st": 0, "2nd": 1, "3rd": 2, "4th": 3,
}  # fmt: skip
# "the first entry of the returned list": what an ordinal member may be "of".
WHOLE_NOUNS = closed(
    "tuple pair triple list set array vector answer result output dict dictionary map"
)
# Greek letters written out: a name ("the ground state psi"), not a noun.
GREEK = closed(
    """alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho
    sigma tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega"""
)
# Words that negate the verb group a phrase hangs on: "should *not* be rounded", "*without*
# rounding", "*don't* round".
NEGATORS = closed("not never without nor neither cannot")
# Clause openers that are no part of the subject after them: "*Note that* the eigenvector is
# defined up to a sign", "*Here* w is fixed up to a constant factor".
SUBJECT_OPENERS = closed(
    """note notice recall remember observe here also again now however moreover furthermore
    thus hence therefore finally clearly obviously besides that since because although though
    while whereas if when unless once as"""
)
# Participles that introduce an input: "…, *knowing* the pressure to 3 decimal places".
INPUT_PARTICIPLES = closed(
    """knowing know knows having using use uses given assuming assume assumes taking take
    takes from via"""
)


def negative(word: str) -> bool:
    """A negator: "not", "never", "without", or a contraction "don't", "shouldn't"."""
    return word in NEGATORS or word.endswith(("n't", "n’t"))


# The form a returned object takes, after the noun that says what it is: "the ground state
# *vector*", "the spin *amplitudes*" are the ground state, the spin.
FORM_NOUNS = closed("vector array list column row amplitude coefficient")
