// Controller bindings (docs/operating.md#controller-bindings): which caller identity holds each
// controller id — GET /v1/admin/controllers, an admin's — and freeing one (DELETE), forced past a
// live lease only after a second confirmation.
import { freeBinding, type Binding, type Outcome } from '../actions.js'
import { api, type BindingList } from '../api.js'
import { fill, h, table, whenCell } from '../dom.js'
import { actionButton, problem, section, type PageContext } from '../page.js'

export async function bindingsPage (ctx: PageContext): Promise<void> {
  const title = h('h1', {}, 'Controller bindings')
  if (!ctx.admin) {
    fill(ctx.main, title, h('p', { class: 'problem' }, 'The controller bindings (GET /v1/admin/controllers) need a token with the admin scope.'))
    return
  }
  let list: BindingList
  try {
    list = await api<BindingList>('GET', '/v1/admin/controllers')
  } catch (err) {
    fill(ctx.main, title, problem(err))
    return
  }
  const intro = h('p', {}, 'Each controller id is held by the caller identity that first mutated under it; another identity presenting it is refused (403 controller_conflict). Free one when its holder changed on purpose.')
  fill(ctx.main, title, section('Bindings',
    intro,
    list.controllers.length === 0
      ? h('p', {}, 'No controller id is bound yet.')
      : table(['controller id', 'identity', 'caller', 'bound', ''], list.controllers.map((b) => [
        h('code', {}, b.controllerId),
        h('code', { class: 'wrap' }, b.identity),
        h('span', { class: 'free' }, b.caller),
        whenCell(b.boundAt),
        actionButton(ctx, 'Free…', 'free', async () => await free(b))
      ]), { class: 'wide', 'data-bindings': '' })))
}

/** frees the binding; a live lease refuses it (409), and then the operator may force it, confirmed again */
async function free (b: Binding): Promise<Outcome | undefined> {
  const first = await freeBinding(b)
  if (first?.refused?.code !== 'controller_lease_held') return first
  return await freeBinding(b, { refusal: first.refused.message }) ?? first
}
